//! Joining a command's measuring threads: every one is joined (none left
//! running behind an error), their reports kept in order, and the first
//! failure returned: a worker's own error, or `Panicked` for a worker that
//! panicked (the panic barrier has already released the others). One
//! measurement on a thread of its own is joined the same way.

use super::ExperimentError;
use std::thread::ScopedJoinHandle;

/// Run `f` on a thread of its own (a measurement pins it, and the calling
/// thread keeps its own affinity) and return what it returned; a panic is
/// `Panicked`.
pub(crate) fn on_a_thread<T: Send>(
    f: impl FnOnce() -> Result<T, ExperimentError> + Send,
) -> Result<T, ExperimentError> {
    std::thread::scope(|s| s.spawn(f).join().map_err(|_| ExperimentError::Panicked)?)
}

/// Every worker's report in spawn order, or the first worker's error.
pub(crate) fn join_all<T>(
    handles: Vec<ScopedJoinHandle<'_, Result<T, ExperimentError>>>,
) -> Result<Vec<T>, ExperimentError> {
    let mut reports = Vec::with_capacity(handles.len());
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(r)) => reports.push(r),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(ExperimentError::Panicked);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(reports),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_come_in_order_and_the_first_failure_wins_after_every_join() {
        let ok = std::thread::scope(|s| {
            let hs = (0..4u32).map(|i| s.spawn(move || Ok(i * 10))).collect();
            join_all(hs)
        });
        assert_eq!(ok.unwrap(), [0, 10, 20, 30]);
        let joined = std::sync::atomic::AtomicUsize::new(0);
        let err = std::thread::scope(|s| {
            let joined = &joined;
            let hs = (0..4u32)
                .map(|i| {
                    s.spawn(move || {
                        joined.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        match i {
                            1 => Err(ExperimentError::Invalid(format!("worker {i}"))),
                            2 => panic!("worker {i}"),
                            _ => Ok(i),
                        }
                    })
                })
                .collect();
            join_all(hs)
        });
        assert_eq!(joined.into_inner(), 4);
        assert!(matches!(err, Err(ExperimentError::Invalid(m)) if m == "worker 1"));
        let panicked = std::thread::scope(|s| {
            let hs = vec![
                s.spawn(|| -> Result<u32, ExperimentError> { panic!("first") }),
                s.spawn(|| Err(ExperimentError::Invalid("second".into()))),
            ];
            join_all(hs)
        });
        assert!(matches!(panicked, Err(ExperimentError::Panicked)));
    }
}
