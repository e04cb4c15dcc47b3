//! After `parac_swap`: the storages the time steps exchanged, put back so that every output's
//! values are in its own storage when the call returns. One plan ([`moves`]) for the CPU path
//! ([`deliver`], slices) and the OpenCL executor (device matrices).

/// One move of [`moves`]: the values of name `from` go into its own storage, which name `to`
/// holds: a copy, or an exchange of the two storages' values where `to` is live too. Then the
/// two names exchange storages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The name whose values go home.
    pub from: usize,
    /// The name that holds that home.
    pub to: usize,
    /// Both names' values are kept.
    pub exchange: bool,
}

/// The moves that leave the values of every live name (an output) in its own storage: `at[i]`
/// is the storage name `i` holds now, `home[i]` its own (the names of a group swap among
/// themselves, so `at` is a permutation of `home`). Names already home move nothing; each move
/// puts one live name home for good.
pub fn moves(at: &[usize], home: &[usize], live: &[bool]) -> Vec<Move> {
    let mut at = at.to_vec();
    let mut out = Vec::new();
    for i in 0..at.len() {
        if !live[i] || at[i] == home[i] {
            continue;
        }
        let Some(to) = (0..at.len()).find(|j| at[*j] == home[i]) else {
            continue;
        };
        out.push(Move {
            from: i,
            to,
            exchange: live[to],
        });
        at.swap(i, to);
    }
    out
}

/// The CPU path's `moves`: `slots[i]` is the storage name `i` holds, `homes[i]` the address
/// of its own; every live name's values end in its own storage.
pub fn deliver<T: Copy>(slots: &mut [&mut [T]], homes: &[usize], live: &[bool]) {
    if slots.iter().any(|s| s.is_empty()) {
        return;
    }
    let at: Vec<usize> = slots.iter().map(|s| s.as_ptr() as usize).collect();
    for m in moves(&at, homes, live) {
        let (lo, hi) = (m.from.min(m.to), m.from.max(m.to));
        let (left, right) = slots.split_at_mut(hi);
        let (a, b) = (&mut *left[lo], &mut *right[0]);
        let (from, to) = if m.from == lo { (a, b) } else { (b, a) };
        if m.exchange {
            from.swap_with_slice(to);
        } else {
            to.copy_from_slice(from);
        }
        slots.swap(m.from, m.to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_end_home() {
        // Two names, storages exchanged; only name 0 is an output.
        let (mut a, mut b) = (vec![1, 1], vec![2, 2]);
        let homes = [a.as_ptr() as usize, b.as_ptr() as usize];
        let mut slots: [&mut [i32]; 2] = [&mut b, &mut a];
        deliver(&mut slots, &homes, &[true, false]);
        assert_eq!(a, [2, 2]);
        // Both outputs: exchanged.
        let (mut a, mut b) = (vec![1, 1], vec![2, 2]);
        let homes = [a.as_ptr() as usize, b.as_ptr() as usize];
        let mut slots: [&mut [i32]; 2] = [&mut b, &mut a];
        deliver(&mut slots, &homes, &[true, true]);
        assert_eq!((a, b), (vec![2, 2], vec![1, 1]));
        // A cycle of three, two outputs.
        let at = [1, 2, 0];
        let ms = moves(&at, &[0, 1, 2], &[true, false, true]);
        let mut sim = at.to_vec();
        for m in &ms {
            sim.swap(m.from, m.to);
        }
        assert_eq!((sim[0], sim[2]), (0, 2));
    }
}
