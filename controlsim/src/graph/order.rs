//! Evaluation order within a boundary, from direct feedthrough.
//!
//! An edge `a -> b` exists when an output of `a` drives an input of `b`
//! that is direct feedthrough (or any triggering input of `b` when `b` is
//! evaluated on new inputs, [`Timing::OnInput`](super::Timing::OnInput),
//! since it must see whether its sources were evaluated). Every edge must point forward in
//! the order; inputs that are not direct feedthrough are read as they stand
//! and impose nothing. The strongly connected components of this graph
//! (Tarjan) are the algebraic loops: a component with an edge to itself, or
//! several components on a cycle. The condensation is sorted
//! topologically (Kahn); among the blocks that are ready, the one holding
//! the component declared first goes first, so the order is deterministic
//! and follows the declaration order wherever the graph leaves it free.

/// One entry of the order: a component, or an algebraic loop of several
/// (in declaration order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    One(usize),
    Loop(Vec<usize>),
}

/// The order for `n` components with the given ordering edges `(from, to)`.
/// Self-edges make a one-component loop.
pub(crate) fn evaluation_order(n: usize, edges: &[(usize, usize)]) -> Vec<Block> {
    let mut succ = vec![Vec::new(); n];
    let mut self_loop = vec![false; n];
    for &(a, b) in edges {
        if a == b {
            self_loop[a] = true;
        } else if !succ[a].contains(&b) {
            succ[a].push(b);
        }
    }
    let scc = tarjan(n, &succ);
    let count = scc.iter().copied().max().map_or(0, |m| m + 1);
    let mut members = vec![Vec::new(); count];
    for (v, &c) in scc.iter().enumerate() {
        members[c].push(v);
    }
    let mut indegree = vec![0usize; count];
    let mut csucc = vec![Vec::new(); count];
    for (a, out) in succ.iter().enumerate() {
        for &b in out {
            let (ca, cb) = (scc[a], scc[b]);
            if ca != cb && !csucc[ca].contains(&cb) {
                csucc[ca].push(cb);
                indegree[cb] += 1;
            }
        }
    }
    // Ready blocks keyed by their first member (members are in index order).
    let mut ready: std::collections::BTreeMap<usize, usize> = (0..count)
        .filter(|&c| indegree[c] == 0)
        .map(|c| (members[c][0], c))
        .collect();
    let mut order = Vec::with_capacity(count);
    while let Some((_, c)) = ready.pop_first() {
        for &d in &csucc[c] {
            indegree[d] -= 1;
            if indegree[d] == 0 {
                ready.insert(members[d][0], d);
            }
        }
        let m = &members[c];
        order.push(if m.len() == 1 && !self_loop[m[0]] {
            Block::One(m[0])
        } else {
            Block::Loop(m.clone())
        });
    }
    order
}

/// Tarjan's strongly connected components, iteratively (no recursion
/// depth limit on long chains): the component number of every vertex.
fn tarjan(n: usize, succ: &[Vec<usize>]) -> Vec<usize> {
    const UNSEEN: usize = usize::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comp = vec![UNSEEN; n];
    let mut next_index = 0;
    let mut next_comp = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // (vertex, next successor to look at)
        let mut work = vec![(root, 0usize)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = next_comp;
                    if w == v {
                        break;
                    }
                }
                next_comp += 1;
            }
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_is_sorted_and_free_parts_keep_declaration_order() {
        // 3 -> 1 -> 0, 2 free.
        let order = evaluation_order(4, &[(3, 1), (1, 0)]);
        assert_eq!(
            order,
            [Block::One(2), Block::One(3), Block::One(1), Block::One(0)]
        );
    }

    #[test]
    fn cycles_and_self_edges_are_loops() {
        // 0 -> 1 -> 2 -> 1, 3 -> 3, 2 -> 4
        let order = evaluation_order(5, &[(0, 1), (1, 2), (2, 1), (3, 3), (2, 4)]);
        assert_eq!(
            order,
            [
                Block::One(0),
                Block::Loop(vec![1, 2]),
                Block::Loop(vec![3]),
                Block::One(4)
            ]
        );
    }

    #[test]
    fn long_chains_do_not_recurse() {
        let n = 100_000;
        let edges: Vec<_> = (0..n - 1).map(|i| (n - 1 - i, n - 2 - i)).collect();
        let order = evaluation_order(n, &edges);
        assert_eq!(order.first(), Some(&Block::One(n - 1)));
        assert_eq!(order.last(), Some(&Block::One(0)));
    }
}
