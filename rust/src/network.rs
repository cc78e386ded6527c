//! The network thread that writes answers to client sockets, as Kafka's network threads
//! (`SocketServer`'s processors) do beside its request handler threads.
//!
//! Writing an answer to a loopback or LAN socket is a system call that also wakes the client
//! reading it: on a small virtual machine it costs more than handling a heartbeat. The server's
//! one event loop hands each answer to a [`Sender`] instead ([`Channel::send`] copies it into a
//! queue) and wakes the sender's thread once per turn of the loop ([`Sender::wake`]); the
//! thread writes the queued answers, each connection's in order, while the loop goes on.
//!
//! A channel writes to its own duplicate of the connection's descriptor, so a descriptor the
//! loop closes (and the system then reuses for a new connection) never receives another
//! connection's answer. A socket whose buffer is full (a client that does not read) keeps its
//! answers queued and is retried after [`RETRY`]; the bytes a channel has queued but not yet
//! written are readable at any time ([`Channel::queued`]) so that the loop can stop serving a
//! connection whose answers pile up; [`Channel::notify_below`] asks the thread to write a byte
//! to the sender's notification socket once they are down to a mark, so that the loop resumes
//! the connection as soon as it may. A socket that fails (the client went away) drops what it
//! had queued: the loop learns of the disconnection from its own side.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{ErrorKind, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};

/// How long a socket whose buffer was full waits before it is written to again.
pub const RETRY: Duration = Duration::from_millis(1);

/// What the loop and the thread share about one channel.
#[derive(Default)]
struct Counters {
    /// Bytes sent but not yet written.
    queued: AtomicUsize,
    /// When not 0: notify the loop once `queued` is at or below it (then back to 0).
    notify_below: AtomicUsize,
}

enum Op {
    Open(u64, Arc<TcpStream>, Arc<Counters>),
    Send(u64, Vec<u8>),
    /// Close the channel's descriptor; with `flush`, after one last try at writing what is
    /// queued (a client that half-closed still reads its answers).
    Close(u64, bool),
}

#[derive(Default)]
struct State {
    ops: Vec<Op>,
    /// The thread waits for operations (and must be woken to see new ones).
    idle: bool,
    stopped: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic on the network thread cannot leave the queue half-updated (it only ever
        // swaps the vector out), so a poisoned lock is still consistent.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The network thread and the queue in front of it.
pub struct Sender {
    shared: Arc<Shared>,
    next_id: u64,
    thread: Option<JoinHandle<()>>,
}

/// One connection's way to its socket: answers sent through it are written in order.
pub struct Channel {
    id: u64,
    shared: Arc<Shared>,
    /// The loop's own hold on the socket, for [`Channel::try_write`]; let go when the channel
    /// closes, so that the thread's dropping its own closes the descriptor.
    stream: Option<Arc<TcpStream>>,
    counters: Arc<Counters>,
    closed: bool,
}

impl Sender {
    /// Start the network thread; it writes a byte to `notify` when a channel that asked to be
    /// notified ([`Channel::notify_below`]) has written down to its mark.
    pub fn start(notify: UnixStream) -> Result<Sender> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("groupcoord-network".into())
            .spawn(move || run(&worker, notify))
            .map_err(|e| Error::IllegalState(format!("cannot start the network thread: {e}")))?;
        Ok(Sender {
            shared,
            next_id: 0,
            thread: Some(thread),
        })
    }

    /// A channel writing to `socket`, which the channel owns from now on (a duplicate of the
    /// connection's descriptor, closed when the channel closes).
    pub fn open(&mut self, socket: TcpStream) -> Result<Channel> {
        let mut state = self.shared.lock();
        if state.stopped {
            return Err(Error::IllegalState("the network thread has stopped".into()));
        }
        self.next_id += 1;
        let counters = Arc::new(Counters::default());
        let stream = Arc::new(socket);
        state.ops.push(Op::Open(
            self.next_id,
            Arc::clone(&stream),
            Arc::clone(&counters),
        ));
        Ok(Channel {
            id: self.next_id,
            shared: Arc::clone(&self.shared),
            stream: Some(stream),
            counters,
            closed: false,
        })
    }

    /// Have the network thread write what was sent since it last looked.
    pub fn wake(&self) {
        let state = self.shared.lock();
        if state.idle && !state.ops.is_empty() {
            self.shared.wake.notify_one();
        }
    }

    /// Write what is queued (one try per socket), close every channel's descriptor and stop
    /// the thread. Channels closed or sent to afterwards do nothing.
    pub fn stop(&mut self) {
        self.shared.lock().stopped = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            // The thread does not panic (it only writes to sockets); if it did, there is
            // nothing left to stop.
            let _ = thread.join();
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Channel {
    /// Queue `data` to be written after everything sent before it.
    pub fn send(&self, data: &[u8]) {
        if self.closed || data.is_empty() {
            return;
        }
        let mut state = self.shared.lock();
        if state.stopped {
            return;
        }
        self.counters
            .queued
            .fetch_add(data.len(), Ordering::Relaxed);
        state.ops.push(Op::Send(self.id, data.to_vec()));
    }

    /// Write `data` now, on the calling thread, if nothing sent before it is still queued;
    /// what the socket does not take at once is queued for the thread. True if all of it was
    /// written (or dropped: the channel is closed or its socket failed), false if some of it
    /// waits for the thread, which must then be woken.
    ///
    /// The thread never writes to a socket with nothing queued, and only the caller queues, so
    /// the two never write to one socket at the same time.
    pub fn try_write(&self, data: &[u8]) -> bool {
        let Some(stream) = self.stream.as_deref().filter(|_| !data.is_empty()) else {
            return true;
        };
        if self.queued() > 0 {
            self.send(data);
            return false;
        }
        let mut written = 0;
        while written < data.len() {
            match (&*stream).write(&data[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return true, // the client went away: the loop hears of it itself
            }
        }
        if written == data.len() {
            return true;
        }
        self.send(&data[written..]);
        false
    }

    /// Bytes sent but not yet written to the socket.
    pub fn queued(&self) -> usize {
        self.counters.queued.load(Ordering::Relaxed)
    }

    /// Have the thread write a byte to the notification socket once at most `mark` bytes
    /// (at least 1) are left to write, or at once if that is already so.
    pub fn notify_below(&self, mark: usize) {
        self.counters
            .notify_below
            .store(mark.max(1), Ordering::Relaxed);
        let mut state = self.shared.lock();
        // An empty send: the thread looks at this channel's mark without a write to wait for.
        state.ops.push(Op::Send(self.id, Vec::new()));
        if state.idle {
            self.shared.wake.notify_one();
        }
    }

    /// Close the channel's descriptor: at once, dropping what is queued, or (`flush`) once the
    /// thread has tried one last time to write it. Then wake the thread.
    pub fn close(&mut self, flush: bool) {
        if self.closed {
            return;
        }
        self.closed = true;
        self.stream = None;
        let mut state = self.shared.lock();
        if state.stopped {
            return;
        }
        state.ops.push(Op::Close(self.id, flush));
        if state.idle {
            self.shared.wake.notify_one();
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.close(false);
    }
}

/// A socket on the network thread, with what it could not take yet.
struct Socket {
    stream: Arc<TcpStream>,
    backlog: VecDeque<Vec<u8>>,
    /// Bytes of `backlog`'s first buffer already written.
    written: usize,
    counters: Arc<Counters>,
    failed: bool,
    /// The last write found the socket full.
    stalled: bool,
}

impl Socket {
    fn push(&mut self, data: Vec<u8>) {
        if data.is_empty() {
        } else if self.failed {
            self.counters
                .queued
                .fetch_sub(data.len(), Ordering::Relaxed);
        } else {
            self.backlog.push_back(data);
        }
    }

    /// Whether the loop asked to hear that this socket's queue is down to its mark, and it
    /// is (the request is then spent).
    fn take_notification(&self) -> bool {
        let mark = self.counters.notify_below.load(Ordering::Relaxed);
        mark != 0
            && self.counters.queued.load(Ordering::Relaxed) <= mark
            && self
                .counters
                .notify_below
                .compare_exchange(mark, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Write as much of the backlog as the socket takes now. Before a write that would bring
    /// the queue down to the loop's mark, write the notification first: the client cannot
    /// have read those bytes before the loop can see it, so a client that waits for them finds
    /// its connection served again.
    fn write(&mut self, mut notify: Option<&mut UnixStream>) {
        while let Some(front) = self.backlog.front() {
            let chunk = front.len() - self.written;
            let mark = self.counters.notify_below.load(Ordering::Relaxed);
            if mark != 0
                && !self.stalled
                && self
                    .counters
                    .queued
                    .load(Ordering::Relaxed)
                    .saturating_sub(chunk)
                    <= mark
                && self
                    .counters
                    .notify_below
                    .compare_exchange(mark, 0, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                if let Some(notify) = notify.as_deref_mut() {
                    let _ = notify.write(&[1]);
                }
            }
            match (&*self.stream).write(&front[self.written..]) {
                Ok(n) => {
                    self.stalled = false;
                    self.written += n;
                    self.counters.queued.fetch_sub(n, Ordering::Relaxed);
                    if self.written == front.len() {
                        self.backlog.pop_front();
                        self.written = 0;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    // Not announced again before the client has read some of it: one that
                    // does not read would otherwise be announced at every retry.
                    self.stalled = true;
                    return;
                }
                Err(_) => {
                    self.fail();
                    return;
                }
            }
        }
    }

    fn fail(&mut self) {
        self.failed = true;
        let unwritten: usize = self.backlog.iter().map(Vec::len).sum::<usize>() - self.written;
        self.counters.queued.fetch_sub(unwritten, Ordering::Relaxed);
        self.backlog.clear();
        self.written = 0;
    }

    fn waiting(&self) -> bool {
        !self.backlog.is_empty()
    }
}

fn run(shared: &Shared, mut notify: UnixStream) {
    // Non-blocking: a notification the loop has not read yet already tells it to look.
    let _ = notify.set_nonblocking(true);
    let mut sockets: HashMap<u64, Socket> = HashMap::new();
    // The sockets with a backlog, and those the last operations touched: only they can
    // write or reach their mark (the others, thousands perhaps, are not looked at).
    let mut waiting: HashSet<u64> = HashSet::new();
    let mut touched: Vec<u64> = Vec::new();
    loop {
        let (ops, stopped) = {
            let mut state = shared.lock();
            while state.ops.is_empty() && !state.stopped {
                if !waiting.is_empty() {
                    state = shared
                        .wake
                        .wait_timeout(state, RETRY)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0;
                    break;
                }
                state.idle = true;
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                state.idle = false;
            }
            (std::mem::take(&mut state.ops), state.stopped)
        };
        apply(&mut sockets, ops, &mut touched);
        touched.extend(waiting.drain());
        touched.sort_unstable();
        touched.dedup();
        let mut drained = false;
        for id in touched.drain(..) {
            if let Some(socket) = sockets.get_mut(&id) {
                socket.write(Some(&mut notify));
                drained |= socket.take_notification();
                if socket.waiting() {
                    waiting.insert(id);
                }
            }
        }
        if drained {
            let _ = notify.write(&[1]);
        }
        if stopped {
            return; // dropping the sockets closes their descriptors
        }
    }
}

fn apply(sockets: &mut HashMap<u64, Socket>, ops: Vec<Op>, touched: &mut Vec<u64>) {
    for op in ops {
        match op {
            Op::Open(id, stream, counters) => {
                let socket = Socket {
                    stream,
                    backlog: VecDeque::new(),
                    written: 0,
                    counters,
                    failed: false,
                    stalled: false,
                };
                sockets.insert(id, socket);
            }
            Op::Send(id, data) => {
                if let Some(socket) = sockets.get_mut(&id) {
                    socket.push(data);
                    touched.push(id);
                }
            }
            Op::Close(id, flush) => {
                if let Some(mut socket) = sockets.remove(&id) {
                    if flush {
                        socket.write(None);
                    }
                    socket.fail(); // what is left is dropped with the descriptor
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        (server, client)
    }

    fn start() -> (Sender, UnixStream) {
        let (notify, loop_side) = UnixStream::pair().unwrap();
        (Sender::start(notify).unwrap(), loop_side)
    }

    fn read_exactly(client: &mut TcpStream, n: usize) -> Vec<u8> {
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut out = vec![0; n];
        client.read_exact(&mut out).unwrap();
        out
    }

    #[test]
    fn answers_are_written_in_order_once_the_thread_is_woken() {
        let (mut sender, _notified) = start();
        let (server, mut client) = pair();
        let channel = sender.open(server).unwrap();
        for i in 0..100u8 {
            channel.send(&[i; 3]);
        }
        sender.wake();
        let expected: Vec<u8> = (0..100u8).flat_map(|i| [i; 3]).collect();
        assert_eq!(read_exactly(&mut client, 300), expected);
        sender.stop();
    }

    #[test]
    fn a_socket_that_is_not_read_keeps_its_answers_until_it_is() {
        let (mut sender, mut notified) = start();
        let (server, mut client) = pair();
        let channel = sender.open(server).unwrap();
        let chunk = vec![7u8; 1 << 20];
        for _ in 0..16 {
            channel.send(&chunk); // far more than the socket buffers hold
        }
        sender.wake();
        std::thread::sleep(Duration::from_millis(50));
        assert!(channel.queued() > 0, "the full socket holds the rest back");
        channel.notify_below(1000);
        let all = read_exactly(&mut client, 16 << 20);
        assert!(all.iter().all(|&b| b == 7));
        notified
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut byte = [0u8; 1];
        notified.read_exact(&mut byte).unwrap();
        assert!(channel.queued() <= 1000, "notified once down to the mark");
        sender.stop();
    }

    #[test]
    fn a_channel_closed_with_flush_writes_what_it_had_then_closes() {
        let (mut sender, _notified) = start();
        let (server, mut client) = pair();
        let mut channel = sender.open(server).unwrap();
        channel.send(b"last answer");
        channel.close(true);
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut out = Vec::new();
        client.read_to_end(&mut out).unwrap(); // ends: the descriptor was closed
        assert_eq!(out, b"last answer");
        channel.send(b"ignored after close");
        sender.stop();
    }

    #[test]
    fn a_closed_client_fails_its_channel_and_not_the_others() {
        let (mut sender, _notified) = start();
        let (server_a, client_a) = pair();
        let (server_b, mut client_b) = pair();
        let a = sender.open(server_a).unwrap();
        let b = sender.open(server_b).unwrap();
        drop(client_a);
        for _ in 0..50 {
            a.send(&[1u8; 65536]);
        }
        b.send(b"still served");
        sender.wake();
        assert_eq!(read_exactly(&mut client_b, 12), b"still served");
        for _ in 0..1000 {
            if a.queued() == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(a.queued(), 0, "what a failed socket had queued is dropped");
        sender.stop();
    }

    #[test]
    fn a_channel_already_down_to_its_mark_notifies_at_once() {
        let (mut sender, mut notified) = start();
        let (server, _client) = pair();
        let channel = sender.open(server).unwrap();
        channel.notify_below(10);
        notified
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut byte = [0u8; 1];
        notified.read_exact(&mut byte).unwrap();
        sender.stop();
    }

    #[test]
    fn a_write_on_the_callers_thread_keeps_the_order_of_what_is_queued() {
        let (mut sender, _notified) = start();
        let (server, mut client) = pair();
        let channel = sender.open(server).unwrap();
        assert!(
            channel.try_write(b"first "),
            "nothing queued: written at once"
        );
        channel.send(b"second ");
        assert!(
            !channel.try_write(b"third"),
            "behind a queued answer: queued too"
        );
        sender.wake();
        assert_eq!(read_exactly(&mut client, 18), b"first second third");
        let big = vec![5u8; 16 << 20];
        assert!(
            !channel.try_write(&big),
            "more than the socket takes: the rest is queued"
        );
        sender.wake();
        assert_eq!(read_exactly(&mut client, 16 << 20), big);
        sender.stop();
    }

    #[test]
    fn a_stopped_sender_refuses_new_channels() {
        let (mut sender, _notified) = start();
        sender.stop();
        let (server, _client) = pair();
        assert!(matches!(sender.open(server), Err(Error::IllegalState(_))));
    }
}
