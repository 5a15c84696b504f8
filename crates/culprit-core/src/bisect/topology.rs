//! The candidate commits as git bisect sees them: a list in topological order with parent indices, and the
//! ancestry questions the bisect asks of it ("does commit c contain the change introduced at k?").
//!
//! A linear history answers by comparing indices; a history with merges keeps one ancestor bitset per commit.

use super::BisectError;
use serde::{Deserialize, Serialize};

/// One commit of the range. Index 0 is the known-good commit and the last index the known-bad one; every parent
/// index must be smaller than the commit's own (topological order). Parents outside the range (ancestors of good)
/// are simply left out: they are good.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CommitNode {
    /// Indices of the parents inside the range; the first parent first.
    pub parents: Vec<usize>,
    /// Known untestable before the bisect starts (a `git bisect skip` list, a known build failure).
    #[serde(default)]
    pub untestable: bool,
}

impl CommitNode {
    /// A linear history of `count` commits (good at 0, bad at count-1).
    pub fn linear(count: usize) -> Vec<CommitNode> {
        (0..count)
            .map(|i| CommitNode { parents: if i == 0 { vec![] } else { vec![i - 1] }, untestable: false })
            .collect()
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Topology {
    /// Commit i's only parent is i - 1.
    Linear { count: usize },
    /// `ancestors[c]` holds c and all its ancestors inside the range, as a bitset.
    /// `parents[c]` lists c's parents inside the range, the first parent first.
    Dag { ancestors: Vec<Vec<u64>>, parents: Vec<Vec<usize>> },
}

impl Topology {
    pub(crate) fn new(commits: &[CommitNode]) -> Result<Topology, BisectError> {
        if commits.len() < 2 {
            return Err(BisectError::TooFewCommits { count: commits.len() });
        }
        for (index, node) in commits.iter().enumerate() {
            for &parent in &node.parents {
                if parent >= index {
                    return Err(BisectError::ParentNotEarlier { commit: index, parent });
                }
            }
        }
        let linear =
            commits
                .iter()
                .enumerate()
                .all(|(i, node)| if i == 0 { node.parents.is_empty() } else { node.parents == [i - 1] });
        if linear {
            return Ok(Topology::Linear { count: commits.len() });
        }
        let ancestors = ancestor_sets(commits);
        let parents = commits.iter().map(|n| n.parents.clone()).collect();
        let topology = Topology::Dag { ancestors, parents };
        // Git bisect needs the bad commit to contain every candidate; anything else is not a range.
        let bad = commits.len() - 1;
        if let Some(stray) = (1..commits.len()).find(|&c| !topology.contains(c, bad)) {
            return Err(BisectError::NotAncestorOfBad { commit: stray });
        }
        Ok(topology)
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Topology::Linear { count } => *count,
            Topology::Dag { ancestors, .. } => ancestors.len(),
        }
    }

    pub(crate) fn is_linear(&self) -> bool {
        matches!(self, Topology::Linear { .. })
    }

    /// Whether commit `c` contains commit `k` (k is c or one of its ancestors).
    pub(crate) fn contains(&self, k: usize, c: usize) -> bool {
        match self {
            Topology::Linear { count } => k <= c && c < *count,
            Topology::Dag { ancestors, .. } => set_holds(ancestors, k, c),
        }
    }

    /// Whether `c` lies in the segment (lo, hi]: contained in hi and not in lo.
    pub(crate) fn in_segment(&self, c: usize, lo: usize, hi: usize) -> bool {
        self.contains(c, hi) && !self.contains(c, lo)
    }

    /// The commits of the segment (lo, hi], in index order.
    pub(crate) fn segment(&self, lo: usize, hi: usize) -> Vec<usize> {
        match self {
            Topology::Linear { .. } => ((lo + 1)..=hi).collect(),
            Topology::Dag { .. } => (0..self.len()).filter(|&c| self.in_segment(c, lo, hi)).collect(),
        }
    }

    /// The parents of `c` after its first, inside the range (none in a linear history).
    pub(crate) fn merged_parents(&self, c: usize) -> &[usize] {
        match self {
            Topology::Linear { .. } => &[],
            Topology::Dag { parents, .. } => parents.get(c).map_or(&[], |p| p.get(1..).unwrap_or(&[])),
        }
    }

    /// The latest commit of the range that both `a` and `b` contain (a merge base: with topological indices, no
    /// common ancestor with a higher index exists), or `None` when they share none inside the range.
    pub(crate) fn merge_base(&self, a: usize, b: usize) -> Option<usize> {
        (0..=a.min(b)).rev().find(|&k| self.contains(k, a) && self.contains(k, b))
    }

    /// The sum of `weights[k]` over the commits k that `c` contains (itself and its ancestors), added in index
    /// order. `weights` is indexed by commit; commits past its end weigh nothing.
    pub(crate) fn sum_contained(&self, c: usize, weights: &[f64]) -> f64 {
        match self {
            Topology::Linear { .. } => weights.iter().take(c + 1).sum(),
            Topology::Dag { ancestors, .. } => {
                let mut sum = 0.0;
                for (w, &word) in ancestors.get(c).map_or(&[][..], |set| set.as_slice()).iter().enumerate() {
                    let mut bits = word;
                    // Set bits from the lowest: the commits in index order.
                    while bits != 0 {
                        let k = w * 64 + bits.trailing_zeros() as usize;
                        sum += weights.get(k).copied().unwrap_or(0.0);
                        bits &= bits - 1;
                    }
                }
                sum
            }
        }
    }

    /// The segments that together hold the commits of (c, hi] (hi contains c) so that each commit of a segment
    /// holds c's change or lacks it with the segment's start. In a line, and wherever c lies on hi's first-parent
    /// chain, that is (c, hi] itself. When c came in on a branch, (c, hi] also holds the first parent of the
    /// merge M that brought it in and that parent's history, which lack c's change: read against c, M looks like a
    /// step of c's size, and a search of (c, hi] after c was blamed found M and, behind it, c again (an end-to-end
    /// bisect of a series split across two merged branches named the same commit twice). The segment is then cut
    /// at M: (M, hi], (base, first parent of M] with base the merge base of M's two sides (and likewise each
    /// other branch of an octopus merge that lacks c), and the same cut of (c, side] on each side that holds c.
    /// The merge itself is in none of them. Where merge bases are not unique (criss-cross merges) or two sides
    /// hold c, pieces can share commits; a commit is still blamed only once (see `bisect/locate.rs`).
    pub(crate) fn pieces_after(&self, c: usize, hi: usize) -> Vec<(usize, usize)> {
        let mut pieces = Vec::new();
        let mut tops = vec![hi];
        while let Some(top) = tops.pop() {
            // Down the first-parent chain from `top` while the first parent still holds c.
            let mut m = top;
            while m != c {
                match self.first_parent(m) {
                    Some(p) if self.contains(c, p) => m = p,
                    _ => break,
                }
            }
            if m == c {
                pieces.push((c, top));
                continue;
            }
            // `m` holds c and its first parent does not: a merge that brought c in from its other sides.
            let Some(first) = self.first_parent(m) else { continue };
            pieces.push((m, top));
            let sides = self.merged_parents(m);
            let holding: Vec<usize> = sides.iter().copied().filter(|&side| self.contains(c, side)).collect();
            if let Some(base) = holding.first().and_then(|&side| self.merge_base(first, side)) {
                pieces.push((base, first));
            }
            // An octopus merge's branches that lack c: each from where it left the first parent's history.
            for &other in sides.iter().filter(|side| !holding.contains(side)) {
                if let Some(base) = self.merge_base(first, other) {
                    pieces.push((base, other));
                }
            }
            tops.extend(holding);
        }
        pieces.retain(|&(lo, hi)| lo != hi && !self.segment(lo, hi).is_empty());
        pieces
    }

    pub(crate) fn first_parent(&self, c: usize) -> Option<usize> {
        match self {
            Topology::Linear { .. } => c.checked_sub(1),
            Topology::Dag { parents, .. } => parents.get(c).and_then(|p| p.first()).copied(),
        }
    }
}

/// Per commit, a bitset of it and all its ancestors among `commits` (whose parents precede them, as checked by
/// [`Topology::new`]). The simulator's histories with merges read their steps' reach from the same sets.
pub(crate) fn ancestor_sets(commits: &[CommitNode]) -> Vec<Vec<u64>> {
    let words = commits.len().div_ceil(64);
    let mut ancestors: Vec<Vec<u64>> = Vec::with_capacity(commits.len());
    for (index, node) in commits.iter().enumerate() {
        let mut set = vec![0u64; words];
        set[index / 64] |= 1 << (index % 64);
        for &parent in &node.parents {
            // Parents precede the commit, so their sets are complete already.
            let parent_set = &ancestors[parent];
            for (word, parent_word) in set.iter_mut().zip(parent_set) {
                *word |= parent_word;
            }
        }
        ancestors.push(set);
    }
    ancestors
}

/// Whether commit `c`'s set in `ancestors` ([`ancestor_sets`]) holds commit `k`.
pub(crate) fn set_holds(ancestors: &[Vec<u64>], k: usize, c: usize) -> bool {
    ancestors.get(c).and_then(|set| set.get(k / 64)).is_some_and(|word| word & (1 << (k % 64)) != 0)
}
