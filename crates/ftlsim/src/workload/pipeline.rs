//! Reading a trace on a thread of its own: decompression and parsing run beside the simulation,
//! handing requests over in batches through a bounded queue. The simulation stays on one thread
//! and sees exactly the requests, errors included, in the order the reader produced them.

use std::sync::mpsc::{sync_channel, Receiver};

use super::Request;
use crate::error::Result;

/// Requests per hand-over (large enough that the queue costs nothing per request).
const BATCH: usize = 4096;
/// Batches read ahead at most (bounds the memory to a few MB whatever the trace's length).
const DEPTH: usize = 4;

type Requests = Box<dyn Iterator<Item = Result<Request>> + Send>;

/// `requests`, read ahead on another thread (or on this one if no thread can be started).
pub(crate) fn pipelined(mut requests: Requests) -> Requests {
    let (tx, rx) = sync_channel::<Vec<Result<Request>>>(DEPTH);
    let (handoff, back) = sync_channel::<Requests>(1);
    let reader = std::thread::Builder::new().name("trace reader".into()).spawn(move || {
        let mut requests = match back.recv() {
            Ok(requests) => requests,
            Err(_) => return,
        };
        loop {
            let batch: Vec<Result<Request>> = requests.by_ref().take(BATCH).collect();
            // A short batch is the end: the readers stop for good after an error or the last line.
            let last = batch.len() < BATCH;
            if batch.is_empty() || tx.send(batch).is_err() || last {
                return;
            }
        }
    });
    if reader.is_err() {
        return requests;
    }
    match handoff.send(requests) {
        Ok(()) => Box::new(Batches { rx, batch: Vec::new().into_iter() }),
        Err(returned) => {
            requests = returned.0;
            requests
        }
    }
}

struct Batches {
    rx: Receiver<Vec<Result<Request>>>,
    batch: std::vec::IntoIter<Result<Request>>,
}

impl Iterator for Batches {
    type Item = Result<Request>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(request) = self.batch.next() {
                return Some(request);
            }
            self.batch = self.rx.recv().ok()?.into_iter();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SimError;
    use crate::workload::IoKind;

    /// Every request and the error that ends a stream come through in order, across batches.
    #[test]
    fn the_stream_is_handed_over_unchanged() {
        let n = 3 * BATCH as u64 + 17;
        let source = (0..n).map(move |i| {
            if i == n - 1 {
                Err(SimError::input("t", "bad line"))
            } else {
                Ok(Request::new(i, IoKind::Write, i * 512, 512, i + 1))
            }
        });
        let out: Vec<Result<Request>> = pipelined(Box::new(source)).collect();
        assert_eq!(out.len() as u64, n);
        for (i, r) in out[..out.len() - 1].iter().enumerate() {
            assert_eq!(r.as_ref().unwrap().line, i as u64 + 1);
        }
        assert!(out.last().unwrap().is_err());
    }

    /// A consumer that stops early lets the reader thread end.
    #[test]
    fn stopping_early_is_fine() {
        let source = (0..100_000u64).map(|i| Ok(Request::new(i, IoKind::Read, 0, 512, i + 1)));
        let first: Vec<_> = pipelined(Box::new(source)).take(10).collect();
        assert_eq!(first.len(), 10);
    }
}
