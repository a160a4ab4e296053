//! `XdmaCdev` (the `xdma` kernel driver's C2H character devices) against ordinary files and
//! named pipes written by a test thread: the readout stream is one read that ends short at
//! the stream's end; the record ring's words arrive equal and in order across takes of any
//! size whatever chunks the writer sends, its count wraps at 2^32, and a take that times out
//! takes nothing and loses nothing; a missing device names itself and what to load.

use smartnic_driver::access::{AccessError, C2hChannel, RecordRing};
use smartnic_driver::dma::{CdevPaths, DmaError, XdmaCdev};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(30);
const SHORT: Duration = Duration::from_millis(50);

fn words(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s ^ (s >> 29)
        })
        .collect()
}

fn bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A named pipe at `dir/name`.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let ok = Command::new("mkfifo").arg(&p).status().expect("mkfifo (coreutils) runs").success();
    assert!(ok, "mkfifo {}", p.display());
    p
}

/// A file holding `data`.
fn file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    File::create(&p).unwrap().write_all(data).unwrap();
    p
}

#[test]
fn a_readout_stream_of_231153_words_is_one_read() {
    let dir = tempfile::tempdir().unwrap();
    let want = words(1, 231_153);
    let paths =
        CdevPaths { stream: file(dir.path(), "c2h_0", &bytes(&want)), ring: file(dir.path(), "c2h_1", &[]) };
    let mut c = XdmaCdev::open_paths(&paths, 0).unwrap();
    c.arm(want.len()).unwrap();
    assert!(c.wait(LONG).unwrap() == want);
}

/// The device returns fewer bytes than asked when the stream ends (tlast): the words that
/// came, for the readout to name the mismatch; a part of a word is an error.
#[test]
fn a_short_stream_ends_at_its_end_and_a_partial_word_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let want = words(2, 10);
    let paths =
        CdevPaths { stream: file(dir.path(), "c2h_0", &bytes(&want)), ring: file(dir.path(), "c2h_1", &[]) };
    let mut c = XdmaCdev::open_paths(&paths, 0).unwrap();
    c.arm(20).unwrap();
    assert_eq!(c.wait(LONG).unwrap(), want);

    let paths = CdevPaths { stream: file(dir.path(), "odd", &[1; 12]), ring: paths.ring };
    let mut c = XdmaCdev::open_paths(&paths, 0).unwrap();
    c.arm(2).unwrap();
    let e = c.wait(LONG).unwrap_err();
    assert!(matches!(DmaError::of(&e), Some(DmaError::PartialWord { channel: 0, bytes: 12 })), "{e}");
}

#[test]
fn a_stream_that_does_not_come_is_a_stream_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let stream = fifo(dir.path(), "c2h_0");
    let ring = file(dir.path(), "c2h_1", &[]);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let w = {
        let stream = stream.clone();
        // Holds the pipe open and silent until the test is done.
        thread::spawn(move || {
            let _keep = OpenOptions::new().write(true).open(stream).unwrap();
            let _ = done_rx.recv();
        })
    };
    let mut c = XdmaCdev::open_paths(&CdevPaths { stream, ring }, 0).unwrap();
    c.arm(4).unwrap();
    let e = c.wait(SHORT).unwrap_err();
    assert!(matches!(e, AccessError::StreamTimeout { words: 0, .. }), "{e}");
    done_tx.send(()).unwrap();
    w.join().unwrap();
}

/// The read of a stream that timed out still runs: the next stream is refused until it
/// has ended, and its late bytes are not taken for the next stream's.
#[test]
fn a_late_stream_is_not_taken_for_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let stream = fifo(dir.path(), "c2h_0");
    let ring = file(dir.path(), "c2h_1", &[]);
    let (old, new) = (words(7, 4), words(8, 4));
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let w = {
        let (stream, old, new) = (stream.clone(), bytes(&old), bytes(&new));
        thread::spawn(move || {
            let mut f = OpenOptions::new().write(true).open(stream).unwrap();
            go_rx.recv().unwrap();
            f.write_all(&old).unwrap();
            go_rx.recv().unwrap();
            f.write_all(&new).unwrap();
        })
    };
    let mut c = XdmaCdev::open_paths(&CdevPaths { stream, ring }, 0).unwrap();
    c.arm(4).unwrap();
    assert!(matches!(c.wait(SHORT), Err(AccessError::StreamTimeout { words: 0, .. })));
    let e = c.arm(4).unwrap_err();
    assert!(matches!(DmaError::of(&e), Some(DmaError::CdevBusy { .. })), "{e}");
    go_tx.send(()).unwrap();
    let mut tries = 0;
    while c.arm(4).is_err() {
        tries += 1;
        assert!(tries < 1_000, "the late read never ended");
        thread::sleep(Duration::from_millis(1));
    }
    go_tx.send(()).unwrap();
    assert_eq!(c.wait(LONG).unwrap(), new);
    w.join().unwrap();
}

/// The writer sends 50,000 words in chunks of every size (parts of words included); the
/// host takes them in takes of every size; every word arrives once, in order, and the
/// count wraps past 2^32.
#[test]
fn the_ring_through_a_pipe_arrives_in_order_across_takes_and_the_count_wraps() {
    let dir = tempfile::tempdir().unwrap();
    let ring = fifo(dir.path(), "c2h_1");
    let stream = file(dir.path(), "c2h_0", &[]);
    let all = words(3, 50_000);
    let data = bytes(&all);
    let w = {
        let ring = ring.clone();
        thread::spawn(move || {
            let mut f = OpenOptions::new().write(true).open(ring).unwrap();
            let sizes = words(4, 10_000);
            let mut at = 0;
            for s in sizes.iter().cycle() {
                if at == data.len() {
                    break;
                }
                let n = ((s % 3_000) as usize + 1).min(data.len() - at);
                f.write_all(&data[at..at + n]).unwrap();
                at += n;
            }
        })
    };
    let start = u32::MAX - 1_000;
    let mut c = XdmaCdev::open_paths(&CdevPaths { stream, ring }, start).unwrap();
    let (mut got, mut takes) = (Vec::new(), 0);
    let sizes = words(5, 1_000);
    while got.len() < all.len() {
        let n = ((sizes[takes % sizes.len()] % 500) as usize).min(all.len() - got.len()) as u32;
        got.extend(c.take(n, LONG).unwrap());
        takes += 1;
    }
    w.join().unwrap();
    assert!(got == all, "ring words out of order or changed");
    assert_eq!(c.taken(), start.wrapping_add(all.len() as u32));
    assert!(c.taken() < start, "the count wrapped");
}

#[test]
fn a_ring_timeout_takes_nothing_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ring = fifo(dir.path(), "c2h_1");
    let stream = file(dir.path(), "c2h_0", &[]);
    let all = words(6, 20);
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let w = {
        let (ring, data) = (ring.clone(), bytes(&all));
        thread::spawn(move || {
            let mut f = OpenOptions::new().write(true).open(ring).unwrap();
            f.write_all(&data[..84]).unwrap(); // 10 words and half of the 11th
            go_rx.recv().unwrap();
            f.write_all(&data[84..]).unwrap();
        })
    };
    let mut c = XdmaCdev::open_paths(&CdevPaths { stream, ring }, 5).unwrap();
    let e = c.take(20, SHORT).unwrap_err();
    assert!(matches!(e, AccessError::RingTimeout { words: 20, arrived: 10, .. }), "{e}");
    assert_eq!(c.taken(), 5);
    go_tx.send(()).unwrap();
    assert_eq!(c.take(20, LONG).unwrap(), all);
    assert_eq!(c.taken(), 25);
    w.join().unwrap();
}

#[test]
fn a_missing_device_names_itself_and_what_to_load() {
    let e = XdmaCdev::open(97, 0).err().unwrap();
    assert!(matches!(&e, DmaError::Cdev { path, .. } if path == "/dev/xdma97_c2h_0"), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("/dev/xdma97_c2h_0") && msg.contains("modprobe xdma"), "{msg}");
    assert_eq!(CdevPaths::xdma(2).ring, PathBuf::from("/dev/xdma2_c2h_1"));
}

/// A read that fails (a directory cannot be read) is named with the device's path.
#[test]
fn a_failing_read_names_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let paths = CdevPaths { stream: dir.path().to_path_buf(), ring: file(dir.path(), "c2h_1", &[]) };
    let mut c = XdmaCdev::open_paths(&paths, 0).unwrap();
    c.arm(1).unwrap();
    let e = c.wait(LONG).unwrap_err();
    match DmaError::of(&e) {
        Some(DmaError::CdevRead { path, .. }) => assert_eq!(Path::new(path), dir.path()),
        other => panic!("{other:?}"),
    }
}
