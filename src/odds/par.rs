//! A tiny work-sharing helper over `std::thread::scope` (no dependencies).
//!
//! Tasks are numbered `0..tasks`; threads pull the next number from an atomic
//! counter, so uneven tasks balance themselves. Results come back in task order,
//! whatever the number of threads, so that sums over them are bit-for-bit
//! reproducible.
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `f(task)` for every task on `threads` threads; results in task order.
pub(crate) fn map_tasks<T: Send>(tasks: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads.clamp(1, tasks.max(1));
    if threads == 1 {
        return (0..tasks).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut pieces: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let task = next.fetch_add(1, Ordering::Relaxed);
                        if task >= tasks {
                            break done;
                        }
                        done.push((task, f(task)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    pieces.sort_by_key(|(task, _)| *task);
    pieces.into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_task_order_for_any_thread_count() {
        for threads in [1, 2, 5] {
            let v = map_tasks(100, threads, |i| i * i);
            assert_eq!(v, (0..100).map(|i| i * i).collect::<Vec<_>>());
        }
        assert!(map_tasks(0, 2, |i| i).is_empty());
    }
}
