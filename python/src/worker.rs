//! The one thread that owns the `Gpu`. An OpenGL context is current on one thread at a time
//! and `symraster::Gpu` is not `Send`, so every GPU job of every Python thread runs here, one
//! after another: the calling thread sends a closure over a channel and waits for its answer
//! with the GIL released. Factors kept on the GPU (`Cholesky` objects) live in this thread's
//! table and are named by id from Python.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvError, TryRecvError};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use symraster::{Cholesky, Gpu};

/// What the worker thread holds: the GPU (opened on the first job) and the kept factors.
pub struct State {
    gpu: Option<Gpu>,
    /// Factors kept on the GPU, by the id their Python object holds.
    pub factors: HashMap<u64, Cholesky>,
    next_id: u64,
}

impl State {
    /// The GPU, opened on first use on the device chosen from Python (`device.rs`; an open
    /// that failed is tried again by the next job).
    pub fn gpu(&mut self) -> symraster::Result<&Gpu> {
        if self.gpu.is_none() {
            self.gpu = Some(crate::device::open(|asked| match asked {
                Some(index) => Gpu::builder().device(index).build(),
                None => Gpu::new(),
            })?);
        }
        Ok(self.gpu.as_ref().expect("opened above"))
    }

    /// Keeps `factor` and gives its id.
    pub fn keep(&mut self, factor: Cholesky) -> u64 {
        self.next_id += 1;
        self.factors.insert(self.next_id, factor);
        self.next_id
    }
}

/// A job: runs on the worker thread with its state.
type Job = Box<dyn FnOnce(&mut State) + Send>;

/// How a job ended.
pub enum Outcome<R> {
    /// The library's answer, and the seconds the job itself took on the worker.
    Done(symraster::Result<R>, f64),
    /// The job panicked (caught on the worker, which lives on): the panic's message.
    Panicked(String),
    /// The worker thread is gone (it cannot be, short of the process ending).
    Gone,
    /// This process was forked from one whose worker had started: its OpenGL state is the
    /// parent's and cannot be used here (EGL in a forked child hangs), so nothing runs.
    Forked,
}

/// How long the worker, once a job is done, polls for the next one before it sleeps
/// (microseconds): a call made soon after the last one finds it awake rather than paying the
/// wake-up of a sleeping thread (and its core) on the way in.
static WORKER_POLL: AtomicU64 = AtomicU64::new(2_000);

/// How long a calling thread polls for its job's answer before it sleeps (microseconds; none
/// by default: a caller polling beside a job takes a core from the job's host passes over all
/// cores, which cost more than the wake-up saved).
static CALLER_POLL: AtomicU64 = AtomicU64::new(0);

/// The polling windows (worker, caller) in microseconds, for the benchmarks' comparisons
/// (`_native._set_polls` with the `bench` feature); 0 waits asleep at once.
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
pub fn set_polls(worker_us: u64, caller_us: u64) {
    WORKER_POLL.store(worker_us, Ordering::Relaxed);
    CALLER_POLL.store(caller_us, Ordering::Relaxed);
}

/// The next message of `rx`, polled for (yielding the core to any other runnable thread
/// between looks) for up to `window` microseconds, then waited for asleep.
fn recv_polling<T>(rx: &Receiver<T>, window: &AtomicU64) -> Result<T, RecvError> {
    let window = Duration::from_micros(window.load(Ordering::Relaxed));
    if !window.is_zero() {
        let start = Instant::now();
        loop {
            match rx.try_recv() {
                Ok(message) => return Ok(message),
                Err(TryRecvError::Disconnected) => return Err(RecvError),
                Err(TryRecvError::Empty) if start.elapsed() < window => std::thread::yield_now(),
                Err(TryRecvError::Empty) => break,
            }
        }
    }
    rx.recv()
}

/// The worker's channel and the process it was started in: after `os.fork()` the child has
/// no worker thread and inherits the parent's OpenGL/EGL state, which it cannot use.
static WORKER: Mutex<Option<(u32, mpsc::Sender<Job>)>> = Mutex::new(None);

/// The channel to this process's worker, started on first use; `None` in a child forked
/// after the parent's worker started.
fn sender() -> Option<mpsc::Sender<Job>> {
    let mut worker = WORKER.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    match &*worker {
        Some((owner, tx)) if *owner == pid => Some(tx.clone()),
        Some(_) => None,
        None => {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("symraster-gpu".into())
                .spawn(move || {
                    let mut state = State {
                        gpu: None,
                        factors: HashMap::new(),
                        next_id: 0,
                    };
                    while let Ok(job) = recv_polling(&rx, &WORKER_POLL) {
                        job(&mut state);
                    }
                })
                .expect("spawning the GPU worker thread");
            *worker = Some((pid, tx.clone()));
            Some(tx)
        }
    }
}

/// Runs `f` on the worker thread and waits for it with the GIL released. A panic inside `f`
/// is caught there and comes back as [`Outcome::Panicked`].
pub fn run<R, F>(py: Python<'_>, f: F) -> Outcome<R>
where
    R: Send + 'static,
    F: FnOnce(&mut State) -> symraster::Result<R> + Send + 'static,
{
    run_beside(py, f, || ()).0
}

/// [`run`], with `beside` run on the calling thread while the worker runs `f` (host work of
/// the same call that needs no GPU, such as a check of values the job does not read): its
/// answer with the job's outcome. The job is waited for before a panic in `beside` goes on,
/// so that arrays lent to it ([`Lent`]) stay borrowed while it runs.
pub fn run_beside<R, F, S, T>(py: Python<'_>, f: F, beside: S) -> (Outcome<R>, T)
where
    R: Send + 'static,
    F: FnOnce(&mut State) -> symraster::Result<R> + Send + 'static,
    S: FnOnce() -> T + Send,
    T: Send,
{
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move |state| {
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| f(state)));
        let outcome = match result {
            Ok(r) => Outcome::Done(r, start.elapsed().as_secs_f64()),
            Err(payload) => Outcome::Panicked(panic_message(&*payload)),
        };
        let _ = tx.send(outcome);
    });
    py.detach(move || {
        let sent = match sender() {
            None => Err(Outcome::Forked),
            Some(tx) => tx.send(job).map_err(|_| Outcome::Gone),
        };
        let answer = catch_unwind(AssertUnwindSafe(beside));
        let outcome = match sent {
            Ok(()) => recv_polling(&rx, &CALLER_POLL).unwrap_or(Outcome::Gone),
            Err(outcome) => outcome,
        };
        match answer {
            Ok(answer) => (outcome, answer),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// A caller's array (f64 unless told) lent to one job of [`run`] (or [`run_beside`]) without a
/// copy. `run` returns only once its job has finished or was dropped unrun (the job owns the
/// sender its answer goes back by), so the caller's borrow, held across the `run` call,
/// outlives every use inside it.
pub struct Lent<T = f64> {
    ptr: *const T,
    len: usize,
}

// SAFETY: the pointer is only read, inside the one job `run` waits for (see `Lent`).
unsafe impl<T: Sync> Send for Lent<T> {}

impl<T> Lent<T> {
    /// Lends `data` to the next [`run`] of this thread.
    pub fn new(data: &[T]) -> Self {
        Self {
            ptr: data.as_ptr(),
            len: data.len(),
        }
    }

    /// The lent values.
    ///
    /// # Safety
    /// Only inside the job of the [`run`] call made while the borrow given to [`Lent::new`]
    /// is alive (and nothing writes the array meanwhile, as for scipy's own calls that
    /// release the GIL).
    pub unsafe fn get(&self) -> &[T] {
        // SAFETY: as the caller promises, the borrow outlives this job.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Sends `f` to the worker without waiting (dropping a kept factor).
pub fn post<F>(f: F)
where
    F: FnOnce(&mut State) + Send + 'static,
{
    let job: Job = Box::new(move |state| {
        let _ = catch_unwind(AssertUnwindSafe(|| f(state)));
    });
    if let Some(tx) = sender() {
        let _ = tx.send(job);
    }
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
