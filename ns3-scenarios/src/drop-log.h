/*
 * The drop log: one CSV row per drop event of a tagged control packet that a
 * hooked trace source saw, fatal or not, with the packet's tags, where and
 * when, and ns-3's own reason.
 */
#ifndef NETLOOP_DROP_LOG_H
#define NETLOOP_DROP_LOG_H

#include "control-app.h"
#include "drop-traces.h"
#include "wire.h"

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace netloop
{

/**
 * \brief CSV drop log.
 *
 * Columns (header line first):
 *
 *     time_ns,node,flow,port,number,state_index,state_count,sent_ns,reason,reported,source,detail
 *
 * - time_ns, node: when and at which node index the trace fired;
 * - flow: the flow id (empty only if a caller does not know it; the
 *   stepping core always does, from the ControlTag); port, number,
 *   state_index, state_count, sent_ns: the packet's four tag values;
 * - reason: Queue, Phy, Mac, Routing or Other;
 * - reported: 1 for the drop that was reported to the bridge as the packet's
 *   loss (exactly the DropEvents of the StepDone replies), 0 for anything
 *   else: a failed reception the MAC retried, a frame overheard by a third
 *   node, a second trace of an already reported loss;
 * - source: the ns-3 trace source, e.g. WifiPhy::PhyRxDrop;
 * - detail: ns-3's own reason, e.g. PREAMBLE_DETECT_FAILURE or
 *   WIFI_MAC_DROP_REACHED_RETRY_LIMIT (quoted when it holds a comma).
 *
 * Rows are flushed at the end of every step, so a run that dies keeps what
 * it logged.
 */
class DropLog
{
  public:
    /// Opens (truncates) the file and writes the header; check IsOpen().
    explicit DropLog(const std::string& path);
    /// \return whether the file is open
    bool IsOpen() const;
    /// \return the path
    const std::string& GetPath() const;
    /// Appends a row.
    void Write(uint64_t timeNs,
               uint32_t node,
               std::optional<uint32_t> flow,
               const ControlPacket& tags,
               wire::DropReason reason,
               bool reported,
               const DropOrigin& origin);
    /// Flushes the rows written so far.
    void Flush();
    /// \return rows written
    uint64_t GetRows() const;

  private:
    std::string m_path;  //!< file name
    std::ofstream m_out; //!< the file
    uint64_t m_rows = 0; //!< rows written
};

} // namespace netloop

#endif // NETLOOP_DROP_LOG_H
