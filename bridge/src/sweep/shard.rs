//! Splitting a plan among independent invocations: `--shard I/N`.
//!
//! Shard `I` of `N` (1 ≤ I ≤ N) takes the runs whose index in the plan
//! leaves remainder `I - 1` when divided by `N`. Every run belongs to
//! exactly one shard, whatever N is, and dealing runs out in turn rather
//! than in blocks gives each shard a share of every parameter point, so
//! shards of a sweep whose cost grows along an axis take about as long as
//! each other. The mapping depends only on the plan, so any number of
//! machines sharing the sweep directory (or a SLURM job array, see
//! [`super::slurm`]) can run the shards in any order.

use std::fmt;
use std::str::FromStr;

/// One shard of a plan: `index` of `count`, 1-based like `--array=1-N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether run number `run_index` of the plan (0-based) is this shard's.
    pub fn contains(&self, run_index: usize) -> bool {
        run_index % self.count as usize == (self.index - 1) as usize
    }

    /// The plan indices of this shard's runs, among `runs` runs.
    pub fn runs(&self, runs: usize) -> impl Iterator<Item = usize> + '_ {
        (0..runs).filter(move |&i| self.contains(i))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: write I/N with 1 ≤ I ≤ N, e.g. 3/8");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!("3/8".parse::<Shard>(), Ok(Shard { index: 3, count: 8 }));
        assert_eq!(Shard { index: 1, count: 1 }.to_string(), "1/1");
        for bad in ["0/4", "5/4", "1/0", "1", "a/b", "1/2/3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    /// Every run is in exactly one shard, for every shard count, and the
    /// shards' sizes differ by at most one.
    #[test]
    fn shards_partition_the_plan() {
        for runs in [0usize, 1, 7, 24, 100] {
            for count in 1..=30u32 {
                let mut owner = vec![0u32; runs];
                let mut sizes = Vec::new();
                for index in 1..=count {
                    let shard = Shard { index, count };
                    let mine: Vec<usize> = shard.runs(runs).collect();
                    sizes.push(mine.len());
                    for i in mine {
                        owner[i] += 1;
                    }
                }
                assert!(owner.iter().all(|&n| n == 1), "runs {runs}, count {count}");
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1);
            }
        }
    }
}
