//! Independent pieces of work spread over threads, their results in input order.
//!
//! Why: the accuracy lab's (sketch, memory) pairs and the values of MRAC's E step are
//! independent pieces whose results must come out exactly as the single-threaded loop
//! gives them (the same rows, the same floating-point sums in the same order); only the
//! wall time may change. Scoped threads take the next piece from a shared counter, so long
//! and short pieces balance, and each thread keeps its own scratch state between pieces.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The thread count for `asked` (0: the machine's available parallelism).
pub fn threads(asked: usize) -> usize {
    match asked {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// `f(item)` of every item on up to `threads` threads, in the items' order.
pub fn map_ordered<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_with(items, threads, || (), |_, item| f(item))
}

/// `f(state, item)` of every item on up to `threads` threads, in the items' order; each
/// thread makes its `state` once with `init` and keeps it for every item it takes. With
/// one thread (or at most one item) everything runs on the caller's thread. A panic in
/// `f` is passed on to the caller.
pub fn map_with<T: Sync, S, R: Send>(
    items: &[T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        let mut state = init();
        return items.iter().map(|item| f(&mut state, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut state = init();
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return done };
                        done.push((i, f(&mut state, item)));
                    }
                })
            })
            .collect();
        for h in handles {
            let done = h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (i, r) in done {
                slots[i] = Some(r);
            }
        }
    });
    slots.into_iter().map(|r| r.expect("every item was taken by a thread")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same results in the same order for any thread count, uneven work included, and
    /// each thread's state is its own.
    #[test]
    fn results_keep_the_input_order() {
        let items: Vec<u64> = (0..500).collect();
        let slow_square = |x: &u64| {
            // Uneven work: some items take far longer than others.
            if x.is_multiple_of(37) {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            x * x
        };
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        for threads in [1, 2, 3, 8, 1000] {
            assert_eq!(map_ordered(&items, threads, slow_square), want, "{threads} threads");
        }
        // Per-thread state: each thread counts its own items; the counts add up.
        let seen = map_with(
            &items,
            4,
            || 0u64,
            |n, _| {
                *n += 1;
                *n
            },
        );
        assert_eq!(seen.len(), 500);
        assert!(seen.iter().all(|&n| (1..=500).contains(&n)));
        assert!(map_ordered(&[] as &[u64], 4, slow_square).is_empty());
        assert_eq!(threads(3), 3);
        assert!(threads(0) >= 1);
    }

    #[test]
    #[should_panic(expected = "piece 7 failed")]
    fn a_panic_reaches_the_caller() {
        let items: Vec<u32> = (0..20).collect();
        map_ordered(&items, 2, |&x| if x == 7 { panic!("piece {x} failed") } else { x });
    }
}
