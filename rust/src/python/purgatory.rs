//! Python bindings of the purgatory: `DelayedOperation` (subclassed in Python) and
//! `Purgatory`. The semantics are the core's ([`crate::purgatory`]); this layer runs the
//! operations' Python methods between calls into the core and never holds a borrow of the
//! purgatory across Python code, so callbacks may re-enter it.

use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed,
};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};
use pyo3::{ffi, intern, PyTraverseError, PyVisit};

use crate::purgatory::{Item, Purgatory, Released, Visited};
use crate::timer::TimerKey;
use crate::Error;

const NO_ENTRY: u64 = u64::MAX;
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
        if self.hash != other.hash {
            return false;
        }
        if self.obj.is(&other.obj) {
            return true;
        }
        let _attached = attached();
        // SAFETY: both are owned references to live objects and the thread is attached (see
        // `attached`). `PyObject_RichCompareBool` answers without building a result object.
        match unsafe {
            ffi::PyObject_RichCompareBool(self.obj.as_ptr(), other.obj.as_ptr(), ffi::Py_EQ)
        } {
            1 => true,
            0 => false,
            _ => {
                // SAFETY: as above; an `__eq__` that raised counts as unequal.
                unsafe { ffi::PyErr_Clear() };
                false
            }
        }
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

/// The purgatory's handle on a Python operation: the one reference it keeps, in the
/// operation's timer entry.
struct OpRef(Py<DelayedOperation>);

impl Clone for OpRef {
    fn clone(&self) -> Self {
        OpRef(self.0.clone_ref(attached()))
    }
}

type Core = Purgatory<PyKey, OpRef, Py<PyAny>, BuildHasherDefault<KeyHasher>>;

/// Which of the three hooks a Python class overrides, cached per class so that the default
/// (empty) ones cost no call. Classes are few; the list keeps them alive, so a cached class's
/// address is never reused by another.
static HOOKS: Mutex<Vec<(Py<PyType>, u8)>> = Mutex::new(Vec::new());
/// The class looked up last, in front of [`HOOKS`]: its address with its hooks in the low
/// bits (a type object is aligned to 8 bytes, and the hooks take 3 bits).
static LAST_HOOKS: AtomicUsize = AtomicUsize::new(0);
const HOOK_BITS: usize = 0b111;

fn hooks_of(ty: &Bound<'_, PyType>) -> PyResult<u8> {
    let address = ty.as_ptr() as usize;
    let last = LAST_HOOKS.load(Relaxed);
    if last & !HOOK_BITS == address {
        return Ok((last & HOOK_BITS) as u8);
    }
    let hooks = hooks_of_uncached(ty)?;
    if address & HOOK_BITS == 0 {
        LAST_HOOKS.store(address | usize::from(hooks), Relaxed);
    }
    Ok(hooks)
}

fn hooks_of_uncached(ty: &Bound<'_, PyType>) -> PyResult<u8> {
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
///
/// It holds no reference to Python objects, so it is not tracked by the garbage collector,
/// and neither is a subclass that adds no attributes (`__slots__ = ()`).
#[pyclass(subclass, frozen, module = "groupcoord._native")]
pub struct DelayedOperation {
    delay_ms: AtomicI64,
    completed: AtomicBool,
    initialized: AtomicBool,
    hooks: AtomicU8,
    /// The operation's timer entry while a purgatory watches it: the key's bits, or NO_ENTRY.
    entry: AtomicU64,
    /// The purgatory holding that entry, borrowed (see [`DelayedOperation::owner`]).
    owner: AtomicPtr<ffi::PyObject>,
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

    /// The purgatory whose core holds this operation's entry, if one does.
    fn owner<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyPurgatory>> {
        let owner = self.owner.load(Relaxed);
        if owner.is_null() {
            return None;
        }
        // SAFETY: `owner` is set only while the operation has a live entry in that
        // purgatory's core, and the purgatory detaches every operation whose entry it
        // releases (completion, expiry, cancellation, shutdown, garbage collection and its
        // own deallocation) before the release, always attached to the interpreter. So a
        // non-null `owner` points at a live `PyPurgatory`; the new reference keeps it alive.
        Some(unsafe { Bound::from_borrowed_ptr(py, owner).cast_into_unchecked() })
    }

    /// This operation's entry in `purgatory`, if it has one there.
    fn entry_in(&self, purgatory: &Bound<'_, PyPurgatory>) -> Option<TimerKey> {
        if self.owner.load(Relaxed) != purgatory.as_ptr() {
            return None;
        }
        match self.entry.load(Relaxed) {
            NO_ENTRY => None,
            bits => Some(TimerKey::from_bits(bits)),
        }
    }

    fn attach(&self, purgatory: &Bound<'_, PyPurgatory>, entry: TimerKey) {
        self.entry.store(entry.to_bits(), Relaxed);
        self.owner.store(purgatory.as_ptr(), Relaxed);
    }

    /// Forgets the entry `entry` (the purgatory released it), unless it already has another.
    fn detach(&self, entry: TimerKey) {
        if self.entry.load(Relaxed) == entry.to_bits() {
            self.forget_entry();
        }
    }

    /// Forgets the operation's entry and purgatory (the purgatory released everything).
    fn forget_entry(&self) {
        self.entry.store(NO_ENTRY, Relaxed);
        self.owner.store(std::ptr::null_mut(), Relaxed);
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
            entry: AtomicU64::new(NO_ENTRY),
            owner: AtomicPtr::new(std::ptr::null_mut()),
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
        let released = match op.owner(slf.py()) {
            // Borrow first: if that fails nothing has changed and the error says why.
            Some(owner) => {
                let mut purgatory = core_mut(&owner)?;
                if op.completed.swap(true, Relaxed) {
                    return Ok(false);
                }
                let entry = TimerKey::from_bits(op.entry.load(Relaxed));
                op.detach(entry);
                purgatory.core.complete(entry)
            }
            None => {
                if op.completed.swap(true, Relaxed) {
                    return Ok(false);
                }
                None
            }
        };
        drop(released);
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
        } else if op.entry.load(Relaxed) != NO_ENTRY {
            "watched"
        } else {
            "idle"
        };
        Ok(format!(
            "<{} delay_ms={} {state}>",
            slf.get_type().qualname()?,
            op.delay_ms.load(Relaxed)
        ))
    }
}

/// Delayed operations watched under keys, expiring on a hierarchical timing wheel
/// (Kafka's `DelayedOperationPurgatory`). See `_native.pyi` for the contract.
#[pyclass(name = "Purgatory", module = "groupcoord._native")]
pub struct PyPurgatory {
    name: String,
    core: Core,
}

impl Drop for PyPurgatory {
    fn drop(&mut self) {
        // Operations still watched must not keep a pointer to this object.
        release(self.core.shutdown());
    }
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

/// The ValueError for an operation added while it is pending. It names the type, not
/// `repr()`: no Python code may run while the purgatory is borrowed.
fn already_pending(operation: &Bound<'_, DelayedOperation>) -> PyErr {
    match operation.get_type().qualname() {
        Ok(name) => {
            Error::InvalidArgument(format!("this {name} is already pending in a purgatory")).into()
        }
        Err(err) => err,
    }
}

/// Whether `operation` may be watched and armed here now: the purgatory is open and the
/// operation is neither pending nor watched by another purgatory. Returns its idle entry
/// here, if it has one (it was cancelled under one key and is still watched under another).
fn check_addable(
    slf: &Bound<'_, PyPurgatory>,
    this: &PyPurgatory,
    operation: &Bound<'_, DelayedOperation>,
) -> PyResult<Option<TimerKey>> {
    if this.core.is_shut_down() {
        return Err(shut_down_error(&this.name));
    }
    let op = operation.get();
    let entry = op.entry_in(slf);
    let pending = match entry {
        Some(entry) => this.core.is_armed(entry),
        None => !op.owner.load(Relaxed).is_null(),
    };
    if pending {
        return Err(already_pending(operation));
    }
    Ok(entry)
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
        check_addable(slf, &*core_mut(slf)?, operation)?;
        let keys = collect_keys(keys)?;
        if DelayedOperation::call_try_complete(operation)? {
            return Ok(true);
        }
        if !op.completed.load(Relaxed) {
            // The first try ran Python code: it may have shut the purgatory down or added
            // this very operation.
            let mut this = core_mut(slf)?;
            let idle = check_addable(slf, &this, operation)?;
            let entry = this
                .core
                .watch(idle, || OpRef(operation.clone().unbind()), &keys);
            op.attach(slf, entry);
        }
        drop(keys);
        if DelayedOperation::call_try_complete(operation)? {
            return Ok(true);
        }
        if !op.completed.load(Relaxed) {
            // The second try ran Python code too: the operation may have been cancelled,
            // armed, or the purgatory shut down.
            let mut this = core_mut(slf)?;
            if this.core.is_shut_down() {
                return Err(shut_down_error(&this.name));
            }
            if let Some(entry) = op.entry_in(slf) {
                if this.core.is_armed(entry) {
                    return Err(already_pending(operation));
                }
                this.core.arm(entry, op.delay_ms.load(Relaxed));
            }
        }
        Ok(false)
    }

    /// Call `try_complete` on the operations watched under `key`; return how many completed.
    fn check_and_complete(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        let key = PyKey::new(key)?;
        let ops = core_mut(slf)?.core.watched_under(&key);
        let py = slf.py();
        let mut completed = 0;
        let mut outcome = Ok(());
        for (_, op) in &ops {
            let op = op.0.bind(py);
            if op.get().completed.load(Relaxed) {
                continue;
            }
            match DelayedOperation::call_try_complete(op) {
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
        outcome.and(pruned).map(|_| completed)
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
        let (cancelled, deadline, removed) = core_mut(slf)?.core.cancel_for_key(&key);
        drop((deadline, removed));
        let py = slf.py();
        for c in &cancelled {
            if c.released {
                c.op.0.get().detach(c.key);
            }
        }
        PyList::new(py, cancelled.into_iter().map(|c| c.op.0))
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
                Some((entry, Item::Operation { op, .. })) => {
                    let op = op.0.bind(py);
                    op.get().detach(entry);
                    if op.get().completed.swap(true, Relaxed) {
                        continue;
                    }
                    expired += 1;
                    DelayedOperation::call_on_complete(op)?;
                    DelayedOperation::call_on_expiration(op)?;
                }
                Some((_, Item::Deadline(key, callback))) => {
                    expired += 1;
                    callback.bind(py).call1((key.obj.bind(py),))?;
                }
            }
        }
        let emptied = core_mut(slf)?.core.maybe_purge();
        drop(emptied);
        Ok(expired)
    }

    /// When the next operation is due, or None if nothing is pending.
    fn next_expiration_ms(slf: &Bound<'_, Self>) -> PyResult<Option<i64>> {
        Ok(core_mut(slf)?.core.next_expiration_ms())
    }

    /// References in watcher lists, counted once per key (Kafka's `watched()`).
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

    /// The object and the memory its Rust core allocated (wheel, watcher lists, deadline
    /// index), not counting the keys, operations and callbacks it refers to.
    fn __sizeof__(&self) -> usize {
        std::mem::size_of::<PyPurgatory>() + self.core.heap_bytes()
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
        if let Item::Operation { op, .. } = item {
            op.0.get().forget_entry();
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
