//! Property tests of every trace reader: arbitrary bytes, and arbitrary line-like text, never
//! panic; each either parses or fails with an error positioned at `file:line` (or at `file` for
//! errors before the first line: detection, compression).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use ftlsim::workload::{self, Format, TraceOptions};
use proptest::prelude::*;

fn temp(bytes: &[u8]) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("ftlsim-trace-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case{}.trace", NEXT.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Reads `bytes` with every reader (and with detection) and checks every error's position.
fn check_all_readers(bytes: &[u8]) {
    let path = temp(bytes);
    let name = path.display().to_string();
    let mut options: Vec<TraceOptions> = Format::ALL
        .into_iter()
        .filter(|f| *f != Format::Generic)
        .map(|f| TraceOptions { format: Some(f), ..TraceOptions::default() })
        .collect();
    options.push(TraceOptions::default());
    options.push(TraceOptions {
        generic: Some("delim=ws,time=1:s,op=2,offset=3:sector,size=4".parse().unwrap()),
        ..TraceOptions::default()
    });
    options.push(TraceOptions {
        format: Some(Format::Spc),
        asu: workload::AsuLayout::Only(1),
        ..TraceOptions::default()
    });
    for o in options {
        match workload::open(&path, &o) {
            Err(e) => assert!(e.to_string().starts_with(&format!("{name}:")), "{:?}: {e}", o.format),
            Ok(w) => {
                for r in w.requests {
                    if let Err(e) = r {
                        let text = e.to_string();
                        let rest = text
                            .strip_prefix(&format!("{name}:"))
                            .unwrap_or_else(|| panic!("{:?}: unpositioned error {text}", o.format));
                        let line: String = rest.chars().take_while(char::is_ascii_digit).collect();
                        assert!(
                            !line.is_empty() && rest[line.len()..].starts_with(": "),
                            "{:?}: no line number in {text}",
                            o.format
                        );
                    }
                }
            }
        }
    }
    std::fs::remove_file(&path).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check_all_readers(&bytes);
    }

    #[test]
    fn compressed_garbage_is_a_positioned_error(magic in prop::sample::select(vec![&[0x1fu8, 0x8b][..], b"BZh9", &[0xfd, b'7', b'z', b'X', b'Z', 0], &[0x28, 0xb5, 0x2f, 0xfd]]), tail in proptest::collection::vec(any::<u8>(), 0..200)) {
        check_all_readers(&[magic, &tail].concat());
    }

    /// Text that looks like trace lines (digits, separators, opcodes) reaches deeper paths.
    #[test]
    fn line_like_text_never_panics(lines in proptest::collection::vec("[0-9]{0,21}([ ,.+-]{1,2}([0-9a-fA-F]{0,34}|[RrWwD]|Read|Write|8,16|\\[x\\]|-[0-9]+)){0,10}", 0..12)) {
        check_all_readers(lines.join("\n").as_bytes());
    }
}
