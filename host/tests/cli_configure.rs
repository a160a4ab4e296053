//! `smartnic device configure` through the binary, on BAR image files with and without the
//! per-switch block: reading the reset configuration, each setting alone, all at once, what
//! `device status` then shows, and every refusal (no per-switch half, a mode the hardware
//! lacks, a ratio below 1 or not a finite number, a MODE register the driver cannot read).

use serde_json::{json, Value};
use smartnic_contract::geometry::{InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::lut::Log2Params;
use smartnic_contract::per_switch::{InflateRule, PerSwitchGeometry};
use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_contract::regs::{block_type, per_switch, Layout};
use smartnic_driver::access::RegisterAccess;
use smartnic_driver::backend::FileBar;
use smartnic_driver::blocks::PerSwitchConfig;
use std::path::Path;
use std::process::{Command, Output};

const FW: FirmwareInfo = FirmwareInfo { device: 0x7038, version: 0x0001_0002, build_time: 7, git_hash: 1 };

fn smartnic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("binary runs")
}

/// A BAR image of the NIC's default geometry with the per-switch half, at reset.
fn device_with_half(dir: &Path) -> String {
    let path = dir.join("bar.img");
    let (t, s) = (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default());
    FileBar::create_device_with_per_switch(&path, FW, &t, &s, &PerSwitchGeometry::nic_default()).unwrap();
    format!("file:{}", path.display())
}

/// A BAR image of a bitstream with the flow sketches only.
fn device_without_half(dir: &Path) -> String {
    let path = dir.join("flows.img");
    FileBar::create_device(&path, FW, &TowerGeometry::sketchint_fpga(), &SuMaxGeometry::nic_default())
        .unwrap();
    format!("file:{}", path.display())
}

/// Runs `smartnic ARGS --json`, expects success and returns the parsed output.
fn json_of(args: &[&str]) -> Value {
    let out = smartnic(&[args, &["--json"]].concat());
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn configure(dev: &str, settings: &[&str]) -> Value {
    json_of(&[&["device", "configure", "--device", dev], settings].concat())
}

/// The configuration object both `configure` and `status` print for `cfg`.
fn view(cfg: &PerSwitchConfig) -> Value {
    let ratio = (cfg.inflate_threshold as f64 / (1u64 << Log2Params::DEFAULT.frac) as f64).exp2();
    json!({
        "mode": cfg.mode.name(),
        "inflate_threshold": cfg.inflate_threshold,
        "inflate_ratio": ratio,
        "table_threshold": cfg.table_threshold,
    })
}

/// Is `ratio` what a register set for `asked` may read back as? The contract's LUT log2 is
/// at most `log2(1 + 2^-q)` plus half a unit of its last fraction bit below the true log2,
/// and at most that half unit above.
fn reads_back_as(ratio: f64, asked: f64) -> bool {
    let p = Log2Params::DEFAULT;
    let half_unit = 0.5 / (1u64 << p.frac) as f64;
    let below = (1.0 + 1.0 / (1u64 << p.q) as f64).log2() + half_unit;
    let log = ratio.log2() - asked.log2();
    -below <= log && log <= half_unit
}

/// `view(cfg)` with the registers a run wrote.
fn report(cfg: &PerSwitchConfig, written: &[&str]) -> Value {
    let mut v = view(cfg);
    v["written"] = json!(written);
    v
}

fn status_per_switch(dev: &str) -> Value {
    json_of(&["device", "status", "--device", dev])["per_switch"].clone()
}

#[test]
fn without_a_setting_it_reads_the_reset_configuration_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_with_half(dir.path());
    let image = std::fs::read(dir.path().join("bar.img")).unwrap();
    let reset = PerSwitchConfig::nic_default();
    let got = configure(&dev, &[]);
    assert_eq!(got, report(&reset, &[]));
    let ratio = got["inflate_ratio"].as_f64().unwrap();
    let sketchint = InflateRule::SKETCHINT_RATIO_X256 as f64 / 256.0;
    assert!(reads_back_as(ratio, sketchint), "Delta_l reads back as {ratio}");
    assert_eq!(std::fs::read(dir.path().join("bar.img")).unwrap(), image, "a read wrote the image");

    let out = smartnic(&["device", "configure", "--device", &dev]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let threshold = format!("INFLATE_THRESHOLD {:#x}", reset.inflate_threshold);
    for want in [": per-switch half", "mode             cm", "inflate ratio    5.000", &threshold] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    assert!(text.contains(&format!("table threshold  {}", reset.table_threshold)), "{text}");
}

#[test]
fn each_setting_alone_changes_only_its_register() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_with_half(dir.path());
    let mut want = PerSwitchConfig::nic_default();

    want.mode = InsertMode::Acu;
    assert_eq!(configure(&dev, &["--mode", "acu"]), report(&want, &["MODE"]));
    assert_eq!(status_per_switch(&dev), view(&want));

    want = PerSwitchConfig::from_ratio_x256(want.mode, 3 * 256, want.table_threshold);
    assert_eq!(configure(&dev, &["--inflate-ratio", "3"]), report(&want, &["INFLATE_THRESHOLD"]));
    assert_eq!(status_per_switch(&dev), view(&want));

    want.table_threshold = 1500;
    assert_eq!(configure(&dev, &["--table-threshold", "1500"]), report(&want, &["TABLE_THRESHOLD"]));
    assert_eq!(status_per_switch(&dev), view(&want));

    want.mode = InsertMode::Cm;
    assert_eq!(configure(&dev, &["--mode", "CM"]), report(&want, &["MODE"]));
    assert_eq!(configure(&dev, &[]), report(&want, &[]), "a later read sees what was written");
}

#[test]
fn all_settings_at_once_and_status_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_with_half(dir.path());
    let settings = ["--mode", "acu", "--inflate-ratio", "2.5", "--table-threshold", "4000"];
    let want = PerSwitchConfig::from_ratio_x256(InsertMode::Acu, 640, 4000);
    let got = configure(&dev, &settings);
    assert_eq!(got, report(&want, &["MODE", "INFLATE_THRESHOLD", "TABLE_THRESHOLD"]));
    let ratio = got["inflate_ratio"].as_f64().unwrap();
    assert!(reads_back_as(ratio, 2.5), "Delta_l 2.5 reads back as {ratio}");
    assert_eq!(status_per_switch(&dev), view(&want));

    let out = smartnic(&["device", "status", "--device", &dev]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("per-switch mode acu, inflate ratio 2.500"), "{text}");
    assert!(text.contains("table threshold 4000"), "{text}");

    let out = smartnic(&[&["device", "configure", "--device", &dev][..], &settings].concat());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("wrote MODE, INFLATE_THRESHOLD, TABLE_THRESHOLD; the device holds"), "{text}");
    assert!(text.contains("mode             acu"), "{text}");
}

#[test]
fn the_ratios_edges_are_kept_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_with_half(dir.path());
    let one = configure(&dev, &["--inflate-ratio", "1"]);
    assert_eq!(one["inflate_threshold"], 0, "{one}");
    assert_eq!(one["inflate_ratio"], 1.0, "{one}");
    let four = configure(&dev, &["--inflate-ratio", "4"]);
    assert_eq!(four["inflate_threshold"], 2 << Log2Params::DEFAULT.frac, "{four}");
    assert_eq!(four["inflate_ratio"], 4.0, "{four}");
    let top = configure(&dev, &["--inflate-ratio", "1000000"]);
    let r = top["inflate_ratio"].as_f64().unwrap();
    assert!(reads_back_as(r, 1e6), "{top}");
}

#[test]
fn a_bitstream_without_the_per_switch_half_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_without_half(dir.path());
    for settings in [&[][..], &["--mode", "acu"], &["--table-threshold", "10"]] {
        let out = smartnic(&[&["device", "configure", "--device", &dev][..], settings].concat());
        assert_eq!(out.status.code(), Some(1), "{settings:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("this bitstream has no per-switch half") && err.contains(&dev), "{err}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(status_per_switch(&dev), Value::Null);
}

#[test]
fn bad_settings_are_refused_before_the_device_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_with_half(dir.path());
    let image = std::fs::read(dir.path().join("bar.img")).unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["--mode", "cu", "--table-threshold", "10"],
            "cu (conservative update) is not implemented by the per-switch half's hardware",
        ),
        (&["--mode", "fast"], "`fast` is not an insertion mode of the per-switch half: cm or acu"),
        (
            &["--mode", "acu", "--inflate-ratio", "0.5"],
            "the inflate ratio must be between 1 and 1000000, got 0.5",
        ),
        (&["--inflate-ratio", "nan"], "the inflate ratio must be between 1 and 1000000, got nan"),
        (&["--inflate-ratio", "inf"], "the inflate ratio must be between 1 and 1000000, got inf"),
        (&["--inflate-ratio", "five"], "`five` is not a number"),
        (&["--table-threshold", "4294967296"], "invalid value '4294967296' for '--table-threshold <N>'"),
    ];
    for (settings, message) in cases {
        let all = [&["device", "configure", "--device", &dev][..], settings].concat();
        let out = smartnic(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{all:?}: {err}");
    }
    assert_eq!(std::fs::read(dir.path().join("bar.img")).unwrap(), image, "a refused run wrote the image");
}

#[test]
fn a_mode_register_the_driver_cannot_read_is_named_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device_with_half(dir.path());
    let path = dir.path().join("bar.img");
    let (t, s) = (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default());
    let layout = Layout::with_per_switch(&t, &s, &PerSwitchGeometry::nic_default());
    let mode = layout.block(block_type::PER_SWITCH).unwrap().base + per_switch::MODE;
    let mut bar = FileBar::open(&path).unwrap();
    bar.write32(mode, InsertMode::Cu as u32).unwrap();
    bar.flush().unwrap();
    drop(bar);
    let out = smartnic(&["device", "configure", "--device", &dev, "--mode", "acu"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("MODE at {mode:#x} reads 1, not CM (0) or ACU (2)")), "{err}");
    assert_eq!(FileBar::open(&path).unwrap().read32(mode).unwrap(), 1, "the device was written");
}
