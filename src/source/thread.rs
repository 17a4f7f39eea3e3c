//! Running a [`Feed`] on its own thread: a drop-oldest ring for live sources,
//! a blocking queue for recorded ones.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, select, Receiver, RecvTimeoutError, TryRecvError, TrySendError};

use super::feed::{Counters, Feed};
use super::{Frame, FrameSource, HealthEvent, SourceError, SourceEvent, SourceInfo, SourceStats};

/// Health events waiting for a live feed's consumer; beyond this they are
/// counted in [`SourceStats::health_events_lost`] and dropped.
const HEALTH_CAPACITY: usize = 1024;

enum Channels {
    /// Blocking mode: frames and health events in one ordered queue.
    Ordered(Receiver<SourceEvent>),
    /// Live mode: the frame ring and the health queue.
    Split { frames: Receiver<Frame>, health: Receiver<HealthEvent> },
}

/// The consumer's end of a feed running on its own thread.
///
/// [`recv`](LiveFeed::recv) returns frames and health events and `None` once
/// the source has finished and everything has been read. Dropping the
/// `LiveFeed` asks the thread to stop (it does so after its current read);
/// [`stop`](LiveFeed::stop) also waits for it.
pub struct LiveFeed {
    info: SourceInfo,
    channels: Option<Channels>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Runs a live source (camera, stream, paced simulator) on its own thread.
///
/// Frames go through a ring of `capacity` frames (at least 1): when the
/// consumer falls behind, the *oldest* waiting frame is dropped and counted,
/// so the source never waits and the consumer always gets the freshest
/// frames. Health events go through their own queue and are not dropped
/// unless more than a thousand wait unread.
pub fn spawn_live<S: FrameSource + 'static>(mut feed: Feed<S>, capacity: usize) -> Result<LiveFeed, SourceError> {
    let (tx, rx) = bounded::<Frame>(capacity.max(1));
    let (health_tx, health_rx) = bounded::<HealthEvent>(HEALTH_CAPACITY);
    feed.set_count_delivery(false);
    let counters = feed.counters();
    let stop = feed.stop_flag();
    let info = feed.source().info().clone();
    // The producer keeps a receiver to evict the oldest frame itself.
    let ring = rx.clone();
    let thread_counters = counters.clone();
    let thread = std::thread::Builder::new()
        .name(format!("source-{}", info.camera_id))
        .spawn(move || {
            while let Some(event) = feed.next_event() {
                match event {
                    SourceEvent::Frame(mut frame) => loop {
                        match tx.try_send(frame) {
                            Ok(()) => break,
                            Err(TrySendError::Full(back)) => {
                                if ring.try_recv().is_ok() {
                                    Counters::add(&thread_counters.dropped, 1);
                                }
                                frame = back;
                            }
                            Err(TrySendError::Disconnected(_)) => return,
                        }
                    },
                    SourceEvent::Health(h) => {
                        if health_tx.try_send(h).is_err() {
                            Counters::add(&thread_counters.health_lost, 1);
                        }
                    }
                }
            }
        })
        .map_err(|source| SourceError::Thread { camera_id: info.camera_id.to_string(), source })?;
    Ok(LiveFeed {
        info,
        channels: Some(Channels::Split { frames: rx, health: health_rx }),
        counters,
        stop,
        thread: Some(thread),
    })
}

/// Runs a recorded source (file, folder, replay) on its own thread.
///
/// Frames and health events go, in order, through a queue of `capacity`
/// events (at least 1); when it is full the source waits, so nothing is
/// dropped and the consumer sets the pace.
pub fn spawn_blocking<S: FrameSource + 'static>(mut feed: Feed<S>, capacity: usize) -> Result<LiveFeed, SourceError> {
    let (tx, rx) = bounded::<SourceEvent>(capacity.max(1));
    feed.set_count_delivery(false);
    let counters = feed.counters();
    let stop = feed.stop_flag();
    let info = feed.source().info().clone();
    let thread = std::thread::Builder::new()
        .name(format!("source-{}", info.camera_id))
        .spawn(move || {
            while let Some(event) = feed.next_event() {
                if tx.send(event).is_err() {
                    // The consumer is gone: shutdown, not failure.
                    return;
                }
            }
        })
        .map_err(|source| SourceError::Thread { camera_id: info.camera_id.to_string(), source })?;
    Ok(LiveFeed { info, channels: Some(Channels::Ordered(rx)), counters, stop, thread: Some(thread) })
}

impl LiveFeed {
    /// What the source is.
    pub fn info(&self) -> &SourceInfo {
        &self.info
    }

    /// The counters now.
    pub fn stats(&self) -> SourceStats {
        self.counters.snapshot(&self.info.camera_id)
    }

    fn delivered(&self, event: SourceEvent) -> SourceEvent {
        if matches!(event, SourceEvent::Frame(_)) {
            Counters::add(&self.counters.delivered, 1);
        }
        event
    }

    /// The next frame or health event, waiting for it; `None` once the source
    /// has finished and everything it sent has been read.
    pub fn recv(&self) -> Option<SourceEvent> {
        self.recv_deadline(None).ok()
    }

    /// Like [`recv`](LiveFeed::recv) but waits at most `timeout`:
    /// `Err(Timeout)` if nothing came, `Err(Disconnected)` once finished.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<SourceEvent, RecvTimeoutError> {
        self.recv_deadline(Some(Instant::now() + timeout))
    }

    fn recv_deadline(&self, deadline: Option<Instant>) -> Result<SourceEvent, RecvTimeoutError> {
        let Some(channels) = &self.channels else {
            return Err(RecvTimeoutError::Disconnected);
        };
        match channels {
            Channels::Ordered(rx) => {
                let event = match deadline {
                    Some(d) => rx.recv_deadline(d)?,
                    None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected)?,
                };
                Ok(self.delivered(event))
            }
            Channels::Split { frames, health } => {
                // Health first: it is rare and tells what happened before the next frame.
                match health.try_recv() {
                    Ok(h) => return Ok(SourceEvent::Health(h)),
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => {}
                }
                let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                let never = crossbeam_channel::never();
                let after = match timeout {
                    Some(t) => crossbeam_channel::after(t),
                    None => never,
                };
                select! {
                    recv(frames) -> msg => match msg {
                        Ok(frame) => Ok(self.delivered(SourceEvent::Frame(frame))),
                        // Finished: hand out what health events remain.
                        Err(_) => health.try_recv().map(SourceEvent::Health).map_err(|_| RecvTimeoutError::Disconnected),
                    },
                    recv(health) -> msg => match msg {
                        Ok(h) => Ok(SourceEvent::Health(h)),
                        Err(_) => match frames.recv_deadline(deadline.unwrap_or_else(far_future)) {
                            Ok(frame) => Ok(self.delivered(SourceEvent::Frame(frame))),
                            Err(e) => Err(e),
                        },
                    },
                    recv(after) -> _ => Err(RecvTimeoutError::Timeout),
                }
            }
        }
    }

    /// Asks the source's thread to stop, waits for it, and returns the final counters.
    pub fn stop(mut self) -> SourceStats {
        self.stop.store(true, Ordering::Relaxed);
        // Dropping the receivers unblocks a producer waiting on a full queue.
        self.channels = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.stats()
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(60 * 60 * 24 * 365)
}

impl Iterator for LiveFeed {
    type Item = SourceEvent;

    fn next(&mut self) -> Option<SourceEvent> {
        self.recv()
    }
}

impl Drop for LiveFeed {
    fn drop(&mut self) {
        // The thread notices after its current read and exits; it is not joined
        // here so that dropping a feed whose source hangs cannot hang the caller.
        self.stop.store(true, Ordering::Relaxed);
    }
}
