//! Sizes and durations on the command line: `600KB` (10^3, as the papers count), `2MiB`
//! (2^20), `5s`, `500ms`.

/// Largest size [`parse_bytes`] accepts: 1 GiB. Sizes on the command line are sketch
/// memories (`--memory`), allocated up front; the NIC's whole block RAM is a few MB and the
/// papers' settings are at most a few MB, so 1 GiB leaves ample room while keeping a typo
/// (`600000MB`) from ending in an allocation failure, which aborts the process, or in
/// array depths that no longer fit the geometry's 32 bits.
pub const MAX_BYTES: u64 = 1 << 30;

/// Parses `123`, `600K`, `600KB`, `2M`, `2MB`, `64KiB`, `2MiB` into bytes, at most
/// [`MAX_BYTES`].
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("`{s}` is not a size (try 600KB or 2MiB)"))?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        _ => return Err(format!("unknown size unit `{unit}` (use B, KB, KiB, MB or MiB)")),
    };
    let bytes = n.checked_mul(mult).filter(|&b| b > 0).ok_or_else(|| format!("size `{s}` out of range"))?;
    if bytes > MAX_BYTES {
        return Err(format!(
            "size `{s}` ({bytes} bytes) is above the limit of 1 GiB ({MAX_BYTES} bytes, `1024MiB`) \
             of sketch memory"
        ));
    }
    Ok(bytes)
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
}
