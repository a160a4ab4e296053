//! Topologies from a file: a small line-oriented text format, or the same in JSON.
//!
//! ```text
//! # two leaves, one spine
//! switch leaf0 leaf1 spine0
//! host a b
//! link a leaf0
//! link b leaf1
//! link leaf0 spine0 rate=40G delay=500ns
//! link leaf1 spine0 rate=40G delay=500ns
//! ```
//! Rates take `G`/`M`/`K` suffixes (bits per second), delays `ns`/`us`/`ms`; the defaults
//! are [`DEFAULT_RATE_BPS`] and [`DEFAULT_DELAY_NS`]. JSON: `{"switches": [...], "hosts":
//! [...], "links": [{"a": "x", "b": "y", "rate_bps": 1e10, "delay_ns": 1000}]}`. Switch IDs
//! follow the order switches are declared in; addresses follow [`Topology::assign_addresses`].

use crate::topology::{Topology, TopologyError, DEFAULT_DELAY_NS, DEFAULT_RATE_BPS};
use serde::Deserialize;
use std::collections::HashMap;

/// Why a topology file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("line {line}: {what}")]
    Syntax { line: usize, what: String },
    #[error("not valid topology JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

/// The declarative form both syntaxes read into.
#[derive(Debug, Default, Deserialize)]
pub struct Spec {
    #[serde(default)]
    pub switches: Vec<String>,
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
}

/// One link of a [`Spec`].
#[derive(Debug, Deserialize)]
pub struct LinkSpec {
    pub a: String,
    pub b: String,
    #[serde(default = "default_rate")]
    pub rate_bps: u64,
    #[serde(default = "default_delay")]
    pub delay_ns: u64,
}

fn default_rate() -> u64 {
    DEFAULT_RATE_BPS
}

fn default_delay() -> u64 {
    DEFAULT_DELAY_NS
}

/// Reads a topology from text or JSON (JSON if the first non-blank character is `{`).
pub fn parse(text: &str) -> Result<Topology, FileError> {
    let spec =
        if text.trim_start().starts_with('{') { serde_json::from_str(text)? } else { parse_text(text)? };
    build(&spec)
}

/// The line-oriented syntax.
fn parse_text(text: &str) -> Result<Spec, FileError> {
    let mut spec = Spec::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let err = |what: String| FileError::Syntax { line: i + 1, what };
        match words.next() {
            None => {}
            Some("switch") => spec.switches.extend(words.map(str::to_owned)),
            Some("host") => spec.hosts.extend(words.map(str::to_owned)),
            Some("link") => spec.links.push(parse_link(words.collect()).map_err(err)?),
            Some(other) => return Err(err(format!("unknown statement {other:?} (switch, host or link)"))),
        }
    }
    Ok(spec)
}

/// `link A B [rate=R] [delay=D]`.
fn parse_link(words: Vec<&str>) -> Result<LinkSpec, String> {
    let [a, b, opts @ ..] = words.as_slice() else {
        return Err("a link needs two node names".into());
    };
    let mut link = LinkSpec {
        a: a.to_string(),
        b: b.to_string(),
        rate_bps: DEFAULT_RATE_BPS,
        delay_ns: DEFAULT_DELAY_NS,
    };
    for opt in opts {
        match opt.split_once('=') {
            Some(("rate", v)) => link.rate_bps = parse_rate(v)?,
            Some(("delay", v)) => link.delay_ns = parse_delay(v)?,
            _ => return Err(format!("unknown link option {opt:?} (rate=..., delay=...)")),
        }
    }
    Ok(link)
}

/// A link rate such as `10G`, `400M` or `1000000` (bits per second), as the files write it.
pub fn parse_rate(v: &str) -> Result<u64, String> {
    parse_scaled(v, &[("G", 1_000_000_000), ("M", 1_000_000), ("K", 1_000), ("", 1)])
}

/// A delay such as `500ns`, `2us` or `1ms`, in ns, as the files write it.
pub fn parse_delay(v: &str) -> Result<u64, String> {
    parse_scaled(v, &[("ms", 1_000_000), ("us", 1_000), ("ns", 1)])
}

/// A number with one of the given unit suffixes (the first that matches).
fn parse_scaled(v: &str, units: &[(&str, u64)]) -> Result<u64, String> {
    for &(suffix, scale) in units {
        if let Some(num) = v.strip_suffix(suffix) {
            let x: f64 = num.parse().map_err(|_| format!("{v:?} is not a number"))?;
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!("{v:?} must be a non-negative number"));
            }
            return Ok((x * scale as f64).round() as u64);
        }
    }
    Err(format!("{v:?} needs a unit ({})", units.iter().map(|u| u.0).collect::<Vec<_>>().join(", ")))
}

/// Builds and addresses the topology a spec declares.
pub fn build(spec: &Spec) -> Result<Topology, FileError> {
    let mut t = Topology::default();
    let mut ids = HashMap::new();
    for name in &spec.switches {
        if ids.insert(name.clone(), t.add_switch(name.clone())).is_some() {
            return Err(TopologyError::DuplicateName(name.clone()).into());
        }
    }
    for name in &spec.hosts {
        if ids.insert(name.clone(), t.add_host(name.clone())).is_some() {
            return Err(TopologyError::DuplicateName(name.clone()).into());
        }
    }
    for (index, l) in spec.links.iter().enumerate() {
        let find = |name: &String| {
            ids.get(name).copied().ok_or(TopologyError::UnknownNode { index, name: name.clone() })
        };
        let (a, b) = (find(&l.a)?, find(&l.b)?);
        if a == b {
            return Err(TopologyError::SelfLink { index, name: l.a.clone() }.into());
        }
        t.connect(a, b, l.rate_bps, l.delay_ns);
    }
    t.assign_addresses()?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# two leaves\nswitch leaf0 leaf1 spine0\nhost a b\nlink a leaf0\nlink b leaf1\n\
                        link leaf0 spine0 rate=40G delay=500ns\nlink leaf1 spine0 rate=2.5G delay=2us\n";

    #[test]
    fn text_and_json_give_the_same_topology() {
        let t = parse(TEXT).unwrap();
        assert_eq!(t.switches().count(), 3);
        assert_eq!(t.links[2].rate_bps, 40_000_000_000);
        assert_eq!(t.links[3].delay_ns, 2_000);
        assert_eq!(t.links[3].rate_bps, 2_500_000_000);
        let json = r#"{"switches":["leaf0","leaf1","spine0"],"hosts":["a","b"],"links":[
            {"a":"a","b":"leaf0"},{"a":"b","b":"leaf1"},
            {"a":"leaf0","b":"spine0","rate_bps":40000000000,"delay_ns":500},
            {"a":"leaf1","b":"spine0","rate_bps":2500000000,"delay_ns":2000}]}"#;
        assert_eq!(parse(json).unwrap(), t);
    }

    #[test]
    fn errors_name_the_line_and_the_fault() {
        let e = parse("switch s\nlink s nowhere\n").unwrap_err().to_string();
        assert!(e.contains("unknown node \"nowhere\""), "{e}");
        let e = parse("switch s\nhost h\nlink h s rate=fast\n").unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("\"fast\""), "{e}");
        let e = parse("router r\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("router"), "{e}");
    }
}
