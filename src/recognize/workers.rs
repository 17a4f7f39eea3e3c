//! Recognition spread over worker threads, each with its own [`Recognizer`] (its own copy of the
//! models: ONNX Runtime sessions are run one call at a time), with the results taken in the
//! order of the work, so that what a command prints or reports does not depend on how many
//! workers ran it.
use std::collections::BTreeMap;

use super::{RecognizeError, Recognizer};

/// `workers` recognizers (at least one) from `make`, for [`in_order`].
pub fn workers(
    workers: usize,
    mut make: impl FnMut() -> Result<Recognizer, RecognizeError>,
) -> Result<Vec<Recognizer>, RecognizeError> {
    (0..workers.max(1)).map(|_| make()).collect()
}

/// Runs `work` over `items` with one thread per recognizer (inline for one) and hands the results
/// to `take` in the items' order, so that a report is the same whatever the number of workers.
/// The items are produced on the calling thread (a video decodes in order); the first error
/// stops the run and is returned once the workers have finished.
pub fn in_order<I: Send, R: Send>(
    recognizers: &mut [Recognizer],
    items: impl Iterator<Item = Result<I, RecognizeError>>,
    work: impl Fn(&mut Recognizer, I) -> Result<R, RecognizeError> + Sync,
    mut take: impl FnMut(R),
) -> Result<(), RecognizeError> {
    // with no worker every item would be dropped unseen
    assert!(!recognizers.is_empty(), "in_order needs a recognizer (workers() makes at least one)");
    if let [recognizer] = recognizers {
        for item in items {
            take(work(recognizer, item?)?);
        }
        return Ok(());
    }
    let (job_tx, job_rx) = crossbeam_channel::bounded::<(usize, I)>(2 * recognizers.len());
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<(usize, Result<R, RecognizeError>)>();
    std::thread::scope(|scope| {
        for recognizer in recognizers.iter_mut() {
            let (jobs, done, work) = (job_rx.clone(), done_tx.clone(), &work);
            scope.spawn(move || {
                for (i, item) in jobs {
                    if done.send((i, work(recognizer, item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop((job_rx, done_tx));
        // Results that came before their turn wait for it; the first failure in the items' order
        // (where it happened, what) ends the run as it would end the loop of one worker.
        let (mut early, mut next) = (BTreeMap::new(), 0);
        let mut stop: Option<(usize, RecognizeError)> = None;
        let fail = |stop: &mut Option<(usize, RecognizeError)>, at: usize, e: RecognizeError| {
            if stop.as_ref().map_or(true, |(s, _)| at < *s) {
                *stop = Some((at, e));
            }
        };
        let mut deliver = |(i, r): (usize, Result<R, RecognizeError>), stop: &mut Option<(usize, RecognizeError)>| {
            early.insert(i, r);
            while stop.as_ref().map_or(true, |(s, _)| next < *s) {
                let Some(r) = early.remove(&next) else { break };
                match r {
                    Ok(r) => take(r),
                    Err(e) => fail(stop, next, e),
                }
                next += 1;
            }
        };
        for (i, item) in items.enumerate() {
            while let Ok(d) = done_rx.try_recv() {
                deliver(d, &mut stop);
            }
            if stop.is_some() {
                break;
            }
            match item {
                Ok(item) => {
                    if job_tx.send((i, item)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    fail(&mut stop, i, e);
                    break;
                }
            }
        }
        drop(job_tx);
        for d in done_rx {
            deliver(d, &mut stop);
        }
        stop.map_or(Ok(()), |(_, e)| Err(e))
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    #[test]
    fn workers_hand_their_results_over_in_the_items_order_up_to_the_first_failure() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/fixtures");
        let make = || Recognizer::new(root.join("locator_tiny.onnx"), root.join("classifier_tiny.onnx")).unwrap();
        let failure =
            |i: usize| RecognizeError::Dataset { path: PathBuf::from(format!("item {i}")), message: String::new() };
        let failed_at = |e: RecognizeError| match e {
            RecognizeError::Dataset { path, .. } => path.display().to_string(),
            other => panic!("{other}"),
        };
        for workers in [1, 3] {
            let mut recognizers: Vec<Recognizer> = (0..workers).map(|_| make()).collect();
            // later items finish sooner, so that results come back out of order
            let work = |_: &mut Recognizer, i: usize| {
                std::thread::sleep(std::time::Duration::from_millis(((24 - i) % 5) as u64));
                if i == 13 {
                    Err(failure(i))
                } else {
                    Ok(10 * i)
                }
            };
            let mut got = Vec::new();
            in_order(&mut recognizers, (0..10).map(Ok), work, |r| got.push(r)).unwrap();
            assert_eq!(got, (0..10).map(|i| 10 * i).collect::<Vec<_>>(), "{workers} workers");
            // a failing item: every result before it is taken, none after it
            let mut got = Vec::new();
            let e = in_order(&mut recognizers, (0..24).map(Ok), work, |r| got.push(r)).unwrap_err();
            assert_eq!((got.len(), failed_at(e)), (13, "item 13".to_owned()), "{workers} workers");
            // an item that cannot be produced (a video that ends early) stops it there
            let items = (0..24).map(|i| if i == 7 { Err(failure(i)) } else { Ok(i) });
            let mut got = Vec::new();
            let e = in_order(&mut recognizers, items, work, |r| got.push(r)).unwrap_err();
            assert_eq!(
                (got, failed_at(e)),
                ((0..7).map(|i| 10 * i).collect(), "item 7".to_owned()),
                "{workers} workers"
            );
        }
    }
}
