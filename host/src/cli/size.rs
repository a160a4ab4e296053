//! Sizes and durations on the command line: `600KB` (10^3, as the papers count), `2MiB`
//! (2^20), `5s`, `500ms`.

/// Largest size [`parse_bytes`] accepts: 1 GiB. Sizes on the command line are sketch
/// memories (`--memory`), allocated up front; the NIC's whole block RAM is a few MB and the
/// papers' settings are at most a few MB, so 1 GiB leaves ample room while keeping a typo
/// (`600000MB`) from ending in an allocation failure, which aborts the process, or in
/// array depths that no longer fit the geometry's 32 bits.
pub const MAX_BYTES: u64 = 1 << 30;

/// Size units: each unit's spellings (lower case) and its bytes, and the hint an unknown
/// unit gets. K, M, G and T count in 10^3, as the papers do; KiB and the others in 2^10.
struct Units {
    table: &'static [(&'static [&'static str], u64)],
    hint: &'static str,
}

/// The units of sketch memories (bounded by [`MAX_BYTES`], so no larger unit is needed).
const SKETCH_UNITS: Units = Units {
    table: &[
        (&["", "b"], 1),
        (&["k", "kb"], 1_000),
        (&["kib"], 1 << 10),
        (&["m", "mb"], 1_000_000),
        (&["mib"], 1 << 20),
    ],
    hint: "use B, KB, KiB, MB or MiB",
};

/// [`SKETCH_UNITS`] and the units of a machine's memory.
const LARGE_UNITS: Units = Units {
    table: &[
        (&["", "b"], 1),
        (&["k", "kb"], 1_000),
        (&["kib"], 1 << 10),
        (&["m", "mb"], 1_000_000),
        (&["mib"], 1 << 20),
        (&["g", "gb"], 1_000_000_000),
        (&["gib"], 1 << 30),
        (&["t", "tb"], 1_000_000_000_000),
        (&["tib"], 1 << 40),
    ],
    hint: "use B, KB, KiB, MB, MiB, GB, GiB, TB or TiB",
};

/// Digits and a unit of `units` into bytes, above 0.
fn parse_in(s: &str, units: &Units) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("`{s}` is not a size (try 600KB or 2MiB)"))?;
    let lower = unit.to_ascii_lowercase();
    let Some(&(_, mult)) = units.table.iter().find(|(names, _)| names.contains(&lower.as_str())) else {
        return Err(format!("unknown size unit `{unit}` in `{s}` ({})", units.hint));
    };
    n.checked_mul(mult).filter(|&b| b > 0).ok_or_else(|| format!("size `{s}` out of range"))
}

/// Parses `123`, `600K`, `600KB`, `2M`, `2MB`, `64KiB`, `2MiB` into bytes, at most
/// [`MAX_BYTES`].
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let bytes = parse_in(s, &SKETCH_UNITS)?;
    if bytes > MAX_BYTES {
        return Err(format!(
            "size `{}` ({bytes} bytes) is above the limit of 1 GiB ({MAX_BYTES} bytes, `1024MiB`) \
             of sketch memory",
            s.trim()
        ));
    }
    Ok(bytes)
}

/// Parses a size of a machine's memory (`512MiB`, `8GB`, `16GiB`) into bytes: the units of
/// [`parse_bytes`] and G, GiB, T, TiB, with no bound but 64 bits.
pub fn parse_large_bytes(s: &str) -> Result<u64, String> {
    parse_in(s, &LARGE_UNITS)
}

/// Parses `500ms`, `5s`, `2m` into a duration.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("`{s}` is not a duration (try 5s or 500ms)"))?;
    let ms = match unit {
        "ms" => 1,
        "s" | "" => 1_000,
        "m" => 60_000,
        _ => return Err(format!("unknown duration unit `{unit}` (use ms, s or m)")),
    };
    Ok(std::time::Duration::from_millis(n.saturating_mul(ms)))
}

#[cfg(test)]
mod tests {
    use super::{parse_bytes, parse_duration};
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("5h").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn units() {
        assert_eq!(parse_bytes("600KB"), Ok(600_000));
        assert_eq!(parse_bytes("2MiB"), Ok(2 << 20));
        assert_eq!(parse_bytes("64kib"), Ok(65536));
        assert_eq!(parse_bytes("17"), Ok(17));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("12XB").is_err());
        assert!(parse_bytes("KB").is_err());
    }

    /// `--memory` is bounded: sizes above 1 GiB are refused with the limit in the message
    /// (they used to reach the allocator and abort the process).
    #[test]
    fn sizes_are_bounded() {
        assert_eq!(parse_bytes("1024MiB"), Ok(super::MAX_BYTES));
        for big in ["1025MiB", "1073741825", "600000MB", "18446744073709551615"] {
            let e = parse_bytes(big).unwrap_err();
            assert!(e.contains("above the limit of 1 GiB"), "{big}: {e}");
        }
        assert!(parse_bytes("99999999999999999999").unwrap_err().contains("not a size"));
    }

    /// Memory sizes take the sketch units and G and T; a bad one's error names it.
    #[test]
    fn large_sizes() {
        use super::parse_large_bytes;
        for (text, bytes) in [("4096", 4096), ("512MiB", 512 << 20), ("8g", 8_000_000_000), ("2GiB", 2 << 30)]
        {
            assert_eq!(parse_large_bytes(text), Ok(bytes), "{text}");
        }
        assert_eq!(parse_large_bytes("3TiB"), Ok(3 << 40));
        for bad in ["", "G", "0", "1.5G", "-1M", "8Q", "99999999999TB"] {
            let e = parse_large_bytes(bad).unwrap_err();
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
        assert!(
            parse_bytes("2GB").unwrap_err().contains("unknown size unit `GB`"),
            "sketch sizes stay below G"
        );
    }
}
