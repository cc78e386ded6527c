//! Python bindings of the purgatory: `DelayedOperation` (subclassed in Python) and
//! `Purgatory`. The semantics are the core's ([`crate::purgatory`]); this layer runs the
//! operations' Python methods between calls into the core and never holds a borrow of the
//! purgatory across Python code, so callbacks may re-enter it.

use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::purgatory::{Item, Operation, Purgatory, Released, Visited};
use crate::timer::TimerKey;
use crate::Error;

const NO_TIMER: u64 = u64::MAX;
const OVERRIDES_TRY_COMPLETE: u8 = 1;
const OVERRIDES_ON_COMPLETE: u8 = 2;
const OVERRIDES_ON_EXPIRATION: u8 = 4;
const HOOKS_UNKNOWN: u8 = 0x80;

/// A key: a hashable Python object with its Python hash. Equal keys are the same object or
/// compare equal with `==` (an `__eq__` that raises counts as unequal).
struct PyKey {
    obj: Py<PyAny>,
    hash: isize,
}

impl PyKey {
    fn new(key: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PyKey {
            hash: key.hash()?,
            obj: key.clone().unbind(),
        })
    }
}

/// The purgatory core clones keys and operation handles only inside calls from Python, so
/// the thread is always attached to the interpreter there.
/// Never call the core from inside `py.detach`: its keys are Python objects.
fn attached() -> Python<'static> {
    // SAFETY: see above; every `Purgatory`/`DelayedOperation` method runs attached, and the
    // core is reached from nowhere else. A debug build checks it.
    debug_assert!(unsafe { pyo3::ffi::PyGILState_Check() } == 1);
    unsafe { Python::assume_attached() }
}

impl Clone for PyKey {
    fn clone(&self) -> Self {
        PyKey {
            obj: self.obj.clone_ref(attached()),
            hash: self.hash,
        }
    }
}

impl PartialEq for PyKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && (self.obj.is(&other.obj)
                || self
                    .obj
                    .bind(attached())
                    .eq(other.obj.bind(attached()))
                    .unwrap_or(false))
    }
}

impl Eq for PyKey {}

impl Hash for PyKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_isize(self.hash);
    }
}

/// Python's hash is already a good hash; spread it so every bit of the table index varies.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_isize(&mut self, i: isize) {
        self.0 = (i as u64 ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// The purgatory's handle on a Python operation.
struct OpRef(Py<DelayedOperation>);

impl Clone for OpRef {
    fn clone(&self) -> Self {
        OpRef(self.0.clone_ref(attached()))
    }
}

impl Operation for OpRef {
    fn is_completed(&self) -> bool {
        self.0.get().completed.load(Relaxed)
    }
    fn timer_key(&self) -> Option<TimerKey> {
        match self.0.get().timer_key.load(Relaxed) {
            NO_TIMER => None,
            bits => Some(TimerKey::from_bits(bits)),
        }
    }
    fn set_timer_key(&self, key: Option<TimerKey>) {
        self.0
            .get()
            .timer_key
            .store(key.map_or(NO_TIMER, TimerKey::to_bits), Relaxed);
    }
}

type Core = Purgatory<PyKey, OpRef, Py<PyAny>, BuildHasherDefault<KeyHasher>>;

/// Which of the three hooks a Python class overrides, cached per class so that the default
/// (empty) ones cost no call. Classes are few; the list keeps them alive, so a cached class's
/// address is never reused by another.
static HOOKS: Mutex<Vec<(Py<PyType>, u8)>> = Mutex::new(Vec::new());

fn hooks_of(ty: &Bound<'_, PyType>) -> PyResult<u8> {
    let py = ty.py();
    let base = py.get_type::<DelayedOperation>();
    if ty.is(&base) {
        return Ok(0);
    }
    if let Ok(cache) = HOOKS.lock() {
        if let Some((_, hooks)) = cache.iter().find(|(t, _)| t.is(ty)) {
            return Ok(*hooks);
        }
    }
    let mut hooks = 0;
    for (bit, name) in [
        (OVERRIDES_TRY_COMPLETE, intern!(py, "try_complete")),
        (OVERRIDES_ON_COMPLETE, intern!(py, "on_complete")),
        (OVERRIDES_ON_EXPIRATION, intern!(py, "on_expiration")),
    ] {
        if !ty.getattr(name)?.is(&base.getattr(name)?) {
            hooks |= bit;
        }
    }
    if let Ok(mut cache) = HOOKS.lock() {
        cache.push((ty.clone().unbind(), hooks));
    }
    Ok(hooks)
}

/// An operation that completes when its condition holds or expires after `delay_ms`
/// (Kafka's `DelayedOperation`). Subclass it; see `_native.pyi` for the contract.
#[pyclass(subclass, frozen, module = "groupcoord._native")]
pub struct DelayedOperation {
    delay_ms: AtomicI64,
    completed: AtomicBool,
    initialized: AtomicBool,
    hooks: AtomicU8,
    timer_key: AtomicU64,
    /// The purgatory whose timer holds this operation, while it does.
    owner: Mutex<Option<Py<PyPurgatory>>>,
}

impl DelayedOperation {
    fn hooks(slf: &Bound<'_, Self>) -> PyResult<u8> {
        let hooks = slf.get().hooks.load(Relaxed);
        if hooks != HOOKS_UNKNOWN {
            return Ok(hooks);
        }
        let hooks = hooks_of(&slf.get_type())?;
        slf.get().hooks.store(hooks, Relaxed);
        Ok(hooks)
    }

    fn take_owner(&self) -> Option<Py<PyPurgatory>> {
        self.owner.lock().ok().and_then(|mut owner| owner.take())
    }

    fn set_owner(&self, purgatory: Py<PyPurgatory>) {
        if let Ok(mut owner) = self.owner.lock() {
            *owner = Some(purgatory);
        }
    }

    /// Calls the Python `try_complete` if the class overrides it; the default is False.
    fn call_try_complete(slf: &Bound<'_, Self>) -> PyResult<bool> {
        if Self::hooks(slf)? & OVERRIDES_TRY_COMPLETE == 0 {
            return Ok(false);
        }
        slf.call_method0(intern!(slf.py(), "try_complete"))?
            .is_truthy()
    }

    fn call_on_complete(slf: &Bound<'_, Self>) -> PyResult<()> {
        if Self::hooks(slf)? & OVERRIDES_ON_COMPLETE != 0 {
            slf.call_method0(intern!(slf.py(), "on_complete"))?;
        }
        Ok(())
    }

    fn call_on_expiration(slf: &Bound<'_, Self>) -> PyResult<()> {
        if Self::hooks(slf)? & OVERRIDES_ON_EXPIRATION != 0 {
            slf.call_method0(intern!(slf.py(), "on_expiration"))?;
        }
        Ok(())
    }
}

#[pymethods]
impl DelayedOperation {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __new__(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        DelayedOperation {
            delay_ms: AtomicI64::new(0),
            completed: AtomicBool::new(false),
            initialized: AtomicBool::new(false),
            hooks: AtomicU8::new(HOOKS_UNKNOWN),
            timer_key: AtomicU64::new(NO_TIMER),
            owner: Mutex::new(None),
        }
    }

    fn __init__(&self, delay_ms: i64) {
        self.delay_ms.store(delay_ms, Relaxed);
        self.initialized.store(true, Relaxed);
    }

    /// The delay given at construction, relative to the purgatory's clock when watched.
    #[getter]
    fn delay_ms(&self) -> i64 {
        self.delay_ms.load(Relaxed)
    }

    /// True once `force_complete` has run (by completion or expiry).
    #[getter]
    fn completed(&self) -> bool {
        self.completed.load(Relaxed)
    }

    /// Complete now: cancel the timer, run `on_complete`. True only for the first call.
    fn force_complete(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let op = slf.get();
        if op.completed.load(Relaxed) {
            return Ok(false);
        }
        let owner = op
            .owner
            .lock()
            .ok()
            .and_then(|o| o.as_ref().map(|p| p.clone_ref(slf.py())));
        let removed = match &owner {
            // Borrow first: if that fails nothing has changed and the error says why.
            Some(owner) => {
                let mut purgatory = core_mut(owner.bind(slf.py()))?;
                if op.completed.swap(true, Relaxed) {
                    return Ok(false);
                }
                match op.timer_key.swap(NO_TIMER, Relaxed) {
                    NO_TIMER => None,
                    bits => purgatory.core.cancel_timer_entry(TimerKey::from_bits(bits)),
                }
            }
            None => {
                if op.completed.swap(true, Relaxed) {
                    return Ok(false);
                }
                op.timer_key.store(NO_TIMER, Relaxed);
                None
            }
        };
        drop(removed);
        drop(op.take_owner());
        drop(owner);
        Self::call_on_complete(slf)?;
        Ok(true)
    }

    /// Check the condition; if it holds, return `self.force_complete()`. Default: False.
    fn try_complete(&self) -> bool {
        false
    }

    /// Called exactly once when the operation completes or expires. Default: nothing.
    fn on_complete(&self) {}

    /// Called after `on_complete` when the operation expired. Default: nothing.
    fn on_expiration(&self) {}

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let op = slf.get();
        let state = if op.completed.load(Relaxed) {
            "completed"
        } else if op.timer_key.load(Relaxed) != NO_TIMER {
            "pending"
        } else {
            "idle"
        };
        Ok(format!(
            "<{} delay_ms={} {state}>",
            slf.get_type().qualname()?,
            op.delay_ms.load(Relaxed)
        ))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(owner) = self.owner.try_lock() {
            if let Some(owner) = owner.as_ref() {
                visit.call(owner)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        drop(self.take_owner());
    }
}

/// Delayed operations watched under keys, expiring on a hierarchical timing wheel
/// (Kafka's `DelayedOperationPurgatory`). See `_native.pyi` for the contract.
#[pyclass(name = "Purgatory", module = "groupcoord._native")]
pub struct PyPurgatory {
    name: String,
    core: Core,
}

/// The purgatory, mutably borrowed. Python code runs inside such a borrow only where the core
/// compares keys (`__eq__`) or drops an object (a finalizer); re-entering the purgatory from
/// there gets this RuntimeError instead of a panic, and the purgatory is left unchanged.
fn core_mut<'py>(slf: &Bound<'py, PyPurgatory>) -> PyResult<PyRefMut<'py, PyPurgatory>> {
    slf.try_borrow_mut().map_err(|_| {
        Error::IllegalState(
            "the purgatory was re-entered while it was updating itself (from a key's __eq__ or \
             a finalizer); call it from the operations' callbacks instead"
                .to_owned(),
        )
        .into()
    })
}

fn shut_down_error(name: &str) -> PyErr {
    Error::IllegalState(format!("purgatory {name:?} is shut down")).into()
}

/// Whether `operation` may be watched and armed here now: the purgatory is open and the
/// operation is not pending (in this purgatory or another).
fn check_addable(this: &PyPurgatory, operation: &Bound<'_, DelayedOperation>) -> PyResult<()> {
    if this.core.is_shut_down() {
        return Err(shut_down_error(&this.name));
    }
    if operation.get().timer_key.load(Relaxed) != NO_TIMER {
        // The type's name, not repr(): no Python code may run while the purgatory is borrowed.
        return Err(Error::InvalidArgument(format!(
            "this {} is already pending in a purgatory",
            operation.get_type().qualname()?
        ))
        .into());
    }
    Ok(())
}

fn collect_keys(keys: &Bound<'_, PyAny>) -> PyResult<Vec<PyKey>> {
    let mut out = Vec::new();
    if let Ok(tuple) = keys.cast::<PyTuple>() {
        for key in tuple.iter() {
            out.push(PyKey::new(&key)?);
        }
    } else {
        for key in keys.try_iter()? {
            out.push(PyKey::new(&key?)?);
        }
    }
    if out.is_empty() {
        return Err(Error::InvalidArgument("keys must not be empty".to_owned()).into());
    }
    Ok(out)
}

#[pymethods]
impl PyPurgatory {
    #[new]
    #[pyo3(
        signature = (name = "purgatory".to_owned(), *, start_ms = 0, purge_interval = 1000),
        text_signature = "(name='purgatory', *, start_ms=0, purge_interval=1000)"
    )]
    fn new(name: String, start_ms: i64, purge_interval: usize) -> Self {
        PyPurgatory {
            name,
            core: Purgatory::new(start_ms, purge_interval),
        }
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The purgatory's current time: the largest time passed to `advance_clock`.
    #[getter]
    fn now_ms(&self) -> i64 {
        self.core.now_ms()
    }

    /// Try to complete `operation`; if not done, watch it under every key, try once more,
    /// and only then arm its timer. Returns True if it completed here.
    fn try_complete_else_watch(
        slf: &Bound<'_, Self>,
        operation: &Bound<'_, DelayedOperation>,
        keys: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let op = operation.get();
        if !op.initialized.load(Relaxed) {
            return Err(Error::WrongType(
                "operation must be a DelayedOperation whose __init__ ran (call super().__init__(delay_ms))"
                    .to_owned(),
            )
            .into());
        }
        if op.completed.load(Relaxed) {
            return Err(Error::InvalidArgument(format!(
                "{} has already completed",
                operation.repr()?
            ))
            .into());
        }
        check_addable(&*core_mut(slf)?, operation)?;
        let keys = collect_keys(keys)?;
        if DelayedOperation::call_try_complete(operation)? {
            return Ok(true);
        }
        let handle = OpRef(operation.clone().unbind());
        if !op.completed.load(Relaxed) {
            // The first try ran Python code: it may have shut the purgatory down or added
            // this very operation.
            let mut this = core_mut(slf)?;
            check_addable(&this, operation)?;
            this.core.watch(&handle, &keys);
        }
        drop(keys);
        if DelayedOperation::call_try_complete(operation)? {
            return Ok(true);
        }
        if !op.completed.load(Relaxed) {
            let mut this = core_mut(slf)?;
            check_addable(&this, operation)?;
            op.set_owner(slf.clone().unbind());
            this.core.arm(&handle, op.delay_ms.load(Relaxed));
        }
        Ok(false)
    }

    /// Call `try_complete` on the operations watched under `key`; return how many completed.
    fn check_and_complete(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        let key = PyKey::new(key)?;
        let Some(ops) = core_mut(slf)?.core.watched_under(&key) else {
            return Ok(0);
        };
        let py = slf.py();
        let mut completed = 0;
        let mut outcome = Ok(());
        for op in &ops {
            if op.is_completed() {
                continue;
            }
            match DelayedOperation::call_try_complete(op.0.bind(py)) {
                Ok(true) => completed += 1,
                Ok(false) => {}
                Err(err) => {
                    outcome = Err(err);
                    break;
                }
            }
        }
        let pruned = core_mut(slf).map(|mut this| this.core.prune(&key));
        drop(ops);
        outcome.and(pruned).map(|()| completed)
    }

    /// The heartbeat cycle in one call: complete the deadline pending under `key` (if any),
    /// then watch a new one under `key` expiring at `now_ms + delay_ms`.
    fn watch_deadline(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        delay_ms: i64,
        on_expiration: Py<PyAny>,
    ) -> PyResult<u32> {
        let callback = on_expiration.bind(slf.py());
        if !callback.is_callable() {
            let kind = callback.get_type().name()?;
            return Err(
                Error::WrongType(format!("on_expiration must be callable, not {kind}")).into(),
            );
        }
        let key = PyKey::new(key)?;
        let (completed, previous) = {
            let mut this = core_mut(slf)?;
            if this.core.is_shut_down() {
                return Err(shut_down_error(&this.name));
            }
            this.core.watch_deadline(&key, delay_ms, on_expiration)
        };
        drop(previous);
        Ok(u32::from(completed))
    }

    /// Complete the deadline pending under `key` without scheduling another.
    fn complete_deadline(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = PyKey::new(key)?;
        let payload = core_mut(slf)?.core.complete_deadline(&key);
        Ok(payload.is_some())
    }

    /// Stop watching `key`: cancel (not complete) every operation watched under it,
    /// including its deadline, and return the cancelled operations.
    fn cancel_for_key<'py>(
        slf: &Bound<'py, Self>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let key = PyKey::new(key)?;
        let mut this = core_mut(slf)?;
        // Holding the list keeps the completed operations it drops alive past the borrow.
        let watched = this.core.watched_under(&key);
        let (cancelled, deadline) = this.core.cancel_for_key(&key);
        drop(this);
        drop((watched, deadline));
        let py = slf.py();
        let owners: Vec<_> = cancelled.iter().map(|op| op.0.get().take_owner()).collect();
        drop(owners);
        PyList::new(py, cancelled.into_iter().map(|op| op.0))
    }

    /// Move the clock to `now_ms` (never backwards) and expire every operation due by then.
    /// Returns how many expired.
    fn advance_clock(slf: &Bound<'_, Self>, now_ms: i64) -> PyResult<usize> {
        let py = slf.py();
        core_mut(slf)?.core.advance(now_ms);
        let mut expired = 0;
        loop {
            let item = core_mut(slf)?.core.pop_expired();
            match item {
                None => break,
                Some(Item::Operation(op)) => {
                    let op = op.0.bind(py);
                    drop(op.get().take_owner());
                    if op.get().completed.swap(true, Relaxed) {
                        continue;
                    }
                    expired += 1;
                    DelayedOperation::call_on_complete(op)?;
                    DelayedOperation::call_on_expiration(op)?;
                }
                Some(Item::Deadline(key, callback)) => {
                    expired += 1;
                    callback.call1(py, (key.obj.clone_ref(py),))?;
                }
            }
        }
        let swept = core_mut(slf)?.core.maybe_purge();
        drop(swept);
        Ok(expired)
    }

    /// When the next operation is due, or None if nothing is pending.
    fn next_expiration_ms(&self) -> Option<i64> {
        self.core.next_expiration_ms()
    }

    /// Operations in watcher lists, counted once per key (Kafka's `watched()`).
    fn watched(&self) -> usize {
        self.core.watched()
    }

    /// Operations pending in the timer (Kafka's `numDelayed()`), exact.
    fn num_delayed(&self) -> usize {
        self.core.num_delayed()
    }

    /// Cancel everything without running callbacks; later additions raise RuntimeError.
    fn shutdown(slf: &Bound<'_, Self>) -> PyResult<()> {
        let released = core_mut(slf)?.core.shutdown();
        release(released);
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "<Purgatory {:?} now_ms={} delayed={} watched={}>",
            self.name,
            self.core.now_ms(),
            self.core.num_delayed(),
            self.core.watched()
        )
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let mut result = Ok(());
        self.core.visit(|visited| {
            if result.is_ok() {
                result = match visited {
                    Visited::Key(key) => visit.call(&key.obj),
                    Visited::Operation(op) => visit.call(&op.0),
                    Visited::Payload(callback) => visit.call(callback),
                };
            }
        });
        result
    }

    fn __clear__(&mut self) {
        release(self.core.shutdown());
    }
}

/// Drops what a shutdown took out of the core, after the borrow that took it ended: each
/// operation's link back to the purgatory first, then the objects themselves.
fn release(released: Released<PyKey, OpRef, Py<PyAny>, BuildHasherDefault<KeyHasher>>) {
    for item in &released.items {
        if let Item::Operation(op) = item {
            drop(op.0.get().take_owner());
        }
    }
    drop(released);
}

/// An empty call into Rust: the floor of a Python -> Rust crossing (for benchmarks).
#[pyfunction]
fn empty_call() {}

/// Calls `callback()` `times` times from Rust: the floor of a Rust -> Python crossing.
#[pyfunction]
fn call_repeatedly(callback: &Bound<'_, PyAny>, times: u64) -> PyResult<()> {
    for _ in 0..times {
        callback.call0()?;
    }
    Ok(())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DelayedOperation>()?;
    m.add_class::<PyPurgatory>()?;
    m.add_function(wrap_pyfunction!(empty_call, m)?)?;
    m.add_function(wrap_pyfunction!(call_repeatedly, m)?)?;
    Ok(())
}
