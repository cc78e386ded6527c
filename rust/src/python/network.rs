//! Bindings of [`crate::network`]: the network thread that writes the server's answers.

use std::net::TcpStream;
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::Error;
use crate::network;

/// The network thread: answers handed to its channels are written to their sockets off the
/// event loop, each connection's in order.
#[pyclass(name = "Sender", module = "groupcoord._native")]
struct Sender {
    inner: network::Sender,
}

#[pymethods]
impl Sender {
    /// ``notify_fd``: one end of a Unix socket pair, owned by the sender from now on; the
    /// thread writes a byte to it when a channel that asked (``Channel.notify_below``) has
    /// written down to its mark.
    #[new]
    fn new(notify_fd: i32) -> PyResult<Sender> {
        check_descriptor(notify_fd)?;
        // SAFETY: the caller hands over a descriptor (a Unix socket) it does not use or close
        // again; the stream is its only owner from here on.
        let notify = unsafe { UnixStream::from_raw_fd(notify_fd) };
        Ok(Sender {
            inner: network::Sender::start(notify)?,
        })
    }

    /// A channel writing to descriptor `fd`, which it owns from now on: pass a duplicate of
    /// the connection's socket (``os.dup``), closed when the channel closes.
    fn open(&mut self, fd: i32) -> PyResult<Channel> {
        check_descriptor(fd)?;
        // SAFETY: the caller hands over a descriptor it duplicated for this channel and does
        // not use or close again; the stream is its only owner from here on.
        let stream = unsafe { TcpStream::from_raw_fd(fd) };
        Ok(Channel {
            inner: self.inner.open(stream)?,
        })
    }

    /// Have the thread write what was sent since it last looked (once per turn of the loop).
    fn wake(&self) {
        self.inner.wake();
    }

    /// Write what is queued (one try per socket), close every channel's descriptor and stop
    /// the thread.
    fn stop(&mut self, py: Python<'_>) {
        let inner = &mut self.inner;
        py.detach(|| inner.stop());
    }
}

/// One connection's way to its socket.
#[pyclass(name = "Channel", module = "groupcoord._native")]
struct Channel {
    inner: network::Channel,
}

#[pymethods]
impl Channel {
    /// Queue ``data`` (bytes or a bytearray) to be written after everything sent before it.
    fn send(&self, data: &Bound<'_, PyAny>) -> PyResult<()> {
        with_bytes(data, |bytes| self.inner.send(bytes))
    }

    /// Write ``data`` (bytes or a bytearray) now, on the calling thread, if nothing sent
    /// before it is still queued; what the socket does not take at once is queued for the
    /// thread. True if all of it was written (or dropped: the channel is closed or its socket
    /// failed); False if some of it waits for the thread, which must then be woken.
    fn try_write(&self, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        with_bytes(data, |bytes| self.inner.try_write(bytes))
    }

    /// Bytes sent but not yet written to the socket.
    #[getter]
    fn queued(&self) -> usize {
        self.inner.queued()
    }

    /// Have the thread write a byte to the notification socket once at most ``mark`` bytes are
    /// left to write (at once if that is already so).
    fn notify_below(&self, mark: usize) {
        self.inner.notify_below(mark);
    }

    /// Close the descriptor: at once, dropping what is queued, or (``flush``) after one last
    /// try at writing it.
    #[pyo3(signature = (flush = false))]
    fn close(&mut self, flush: bool) {
        self.inner.close(flush);
    }
}

fn check_descriptor(fd: i32) -> PyResult<()> {
    if fd < 0 {
        return Err(Error::InvalidArgument(format!("not a file descriptor: {fd}")).into());
    }
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Sender>()?;
    m.add_class::<Channel>()?;
    Ok(())
}

/// Run ``f`` on the bytes of ``data``, `bytes` or a contiguous writable buffer (the encoder's
/// `bytearray`), read where they lie: an answer is not copied to be written.
fn with_bytes<T>(data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> T) -> PyResult<T> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(f(bytes.as_bytes()));
    }
    let buffer = PyBuffer::<u8>::get(data)?;
    if !buffer.is_c_contiguous() {
        return Err(PyTypeError::new_err(
            "expected a contiguous buffer of bytes",
        ));
    }
    let len = buffer.item_count();
    if len == 0 {
        return Ok(f(&[]));
    }
    // SAFETY: the buffer is a contiguous export of `len` bytes, held (so alive and not
    // resized) until the end of this function; `f` runs with the GIL held and never releases
    // it, so no Python code can change the bytes while they are read.
    let slice = unsafe { std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, len) };
    Ok(f(slice))
}
