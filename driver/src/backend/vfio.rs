//! BAR access through VFIO, using the `pci-driver` crate's `VfioPciDevice`.
//!
//! The device must be bound to `vfio-pci`, the IOMMU on, every device of its IOMMU group
//! bound to vfio-pci (or to no driver), and `/dev/vfio/<group>` writable by the user. Opening
//! checks all of that first through sysfs, so a failure names what is missing and the
//! commands that fix it, instead of a bare errno from an ioctl.

use super::OpenError;
use crate::access::{check_range, AccessError, RegisterAccess};
use crate::discover::{bind_commands, device_dir, normalize_bdf, read_id, Candidate, SYSFS};
use pci_driver::backends::vfio::VfioPciDevice;
use pci_driver::device::PciDevice;
use pci_driver::regions::{PciRegion, Permissions};
use smartnic_contract::regs::{PCI_DEVICE_ID, PCI_VENDOR_ID};
use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where VFIO looks: the sysfs root and the VFIO device directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VfioPaths {
    pub sysfs: PathBuf,
    pub dev_vfio: PathBuf,
}

impl VfioPaths {
    /// `/sys` and `/dev/vfio`.
    pub fn system() -> Self {
        VfioPaths { sysfs: PathBuf::from(SYSFS), dev_vfio: PathBuf::from("/dev/vfio") }
    }
}

/// A SmartNIC BAR opened through VFIO.
pub struct VfioBar {
    /// The mapped BAR if it is mappable, otherwise the BAR itself (pread/pwrite on the
    /// VFIO device file). Declared before `device` so it is dropped (unmapped) first.
    region: Box<dyn PciRegion>,
    /// The opened device, shared with the other BARs opened from it ([`VfioBar::sibling`]):
    /// a process can open a VFIO group once.
    device: Arc<VfioPciDevice>,
    /// The device's sysfs directory under the paths it was opened with (for errors).
    dir: PathBuf,
    bdf: String,
    group: u32,
}

impl VfioBar {
    /// Opens BAR 0 of the SmartNIC at `bdf` through VFIO.
    pub fn open(bdf: &str) -> Result<Self, OpenError> {
        Self::open_in(&VfioPaths::system(), bdf, 0)
    }

    /// Opens the first SmartNIC bound to vfio-pci in IOMMU group `group`.
    pub fn open_group(group: u32) -> Result<Self, OpenError> {
        let paths = VfioPaths::system();
        let bdf = device_in_group(&paths.sysfs, group)?;
        Self::open_in(&paths, &bdf, 0)
    }

    /// Opens BAR `bar` of the SmartNIC at `bdf`, checking the set-up under `paths` first.
    /// The VFIO calls themselves always go to the system's `/dev/vfio` (pci-driver fixes
    /// that path), so a non-system `paths` is only useful for the checks.
    pub fn open_in(paths: &VfioPaths, bdf: &str, bar: u8) -> Result<Self, OpenError> {
        let (bdf, group) = check_setup(paths, bdf)?;
        let dir = device_dir(&paths.sysfs, &bdf);
        let device = VfioPciDevice::open(&dir).map_err(|source| match source.kind() {
            io::ErrorKind::PermissionDenied => {
                OpenError::GroupPermission { path: paths.dev_vfio.join(group.to_string()) }
            }
            _ => OpenError::Vfio { bdf: bdf.clone(), source },
        })?;
        let vfio = |source| OpenError::Vfio { bdf: bdf.clone(), source };
        let config = device.config();
        let (vendor, dev_id) =
            (config.vendor_id().read().map_err(vfio)?, config.device_id().read().map_err(vfio)?);
        if (vendor, dev_id) != (PCI_VENDOR_ID, PCI_DEVICE_ID) {
            return Err(OpenError::WrongDevice {
                bdf,
                vendor,
                device: dev_id,
                want_vendor: PCI_VENDOR_ID,
                want_device: PCI_DEVICE_ID,
            });
        }
        config.command().memory_space_enable().write(true).map_err(vfio)?;
        let device = Arc::new(device);
        let region = region_of(&device, &dir, &bdf, bar)?;
        Ok(VfioBar { region, device, dir, bdf, group })
    }

    /// BAR `bar` of the same opened device (the DMA engine's registers,
    /// `smartnic_contract::xdma::DMA_BAR`, beside the NIC's BAR 0).
    pub fn sibling(&self, bar: u8) -> Result<Self, OpenError> {
        let region = region_of(&self.device, &self.dir, &self.bdf, bar)?;
        Ok(VfioBar {
            region,
            device: Arc::clone(&self.device),
            dir: self.dir.clone(),
            bdf: self.bdf.clone(),
            group: self.group,
        })
    }

    /// Host memory the device can write by DMA, mapped through its IOMMU.
    pub fn dma_memory(&self) -> Result<crate::dma::VfioDma, crate::dma::DmaError> {
        crate::dma::VfioDma::new(&self.device)
    }

    pub fn bdf(&self) -> &str {
        &self.bdf
    }

    pub fn iommu_group(&self) -> u32 {
        self.group
    }

    /// The underlying pci-driver device (config space, reset, interrupts).
    pub fn device(&self) -> &VfioPciDevice {
        &self.device
    }
}

/// Checks, through sysfs and `/dev/vfio`, that `bdf` can be opened through VFIO; returns
/// the normalised BDF and its IOMMU group.
pub(crate) fn check_setup(paths: &VfioPaths, bdf: &str) -> Result<(String, u32), OpenError> {
    let bdf = normalize_bdf(bdf)?;
    let dir = device_dir(&paths.sysfs, &bdf);
    if !dir.exists() {
        return Err(OpenError::NoDevice { bdf, path: dir });
    }
    let (vendor, device) = (read_id(&dir.join("vendor"))?, read_id(&dir.join("device"))?);
    if (vendor, device) != (PCI_VENDOR_ID, PCI_DEVICE_ID) {
        return Err(OpenError::WrongDevice {
            bdf,
            vendor,
            device,
            want_vendor: PCI_VENDOR_ID,
            want_device: PCI_DEVICE_ID,
        });
    }
    let c = Candidate::read(&paths.sysfs, &bdf)?;
    if !paths.dev_vfio.join("vfio").exists() {
        return Err(OpenError::NoVfio { path: paths.dev_vfio.join("vfio") });
    }
    if c.driver.as_deref() != Some("vfio-pci") {
        let commands = bind_commands(&bdf, c.driver.as_deref());
        return Err(OpenError::NotBoundToVfio { bdf, driver: c.driver, commands });
    }
    let Some(group) = c.iommu_group else {
        return Err(OpenError::NoIommu { path: dir.join("iommu_group") });
    };
    let blocking = c.blocking_peers();
    if !blocking.is_empty() {
        let others = blocking
            .iter()
            .map(|(p, d)| format!("{p} is bound to {}", d.as_deref().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(OpenError::GroupNotViable { group, others });
    }
    let group_dev = paths.dev_vfio.join(group.to_string());
    if let Err(e) = OpenOptions::new().read(true).write(true).open(&group_dev) {
        return Err(match e.kind() {
            io::ErrorKind::PermissionDenied => OpenError::GroupPermission { path: group_dev },
            io::ErrorKind::NotFound => OpenError::NoVfio { path: group_dev },
            _ => OpenError::Io { path: group_dev, source: e },
        });
    }
    Ok((bdf, group))
}

/// The SmartNIC bound to vfio-pci in IOMMU group `group`.
pub(crate) fn device_in_group(sysfs: &Path, group: u32) -> Result<String, OpenError> {
    let dir = sysfs.join("kernel/iommu_groups").join(group.to_string()).join("devices");
    let entries = std::fs::read_dir(&dir).map_err(|source| OpenError::Io { path: dir.clone(), source })?;
    let mut bdfs: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    bdfs.sort();
    for bdf in &bdfs {
        let d = device_dir(sysfs, bdf);
        if let (Ok(PCI_VENDOR_ID), Ok(PCI_DEVICE_ID)) =
            (read_id(&d.join("vendor")), read_id(&d.join("device")))
        {
            return Ok(bdf.clone());
        }
    }
    Err(OpenError::NoDevice { bdf: format!("in IOMMU group {group}"), path: dir })
}

/// BAR `bar` of `device`, mapped if it can be (`dir`: its sysfs directory, for errors).
fn region_of(
    device: &VfioPciDevice,
    dir: &Path,
    bdf: &str,
    bar: u8,
) -> Result<Box<dyn PciRegion>, OpenError> {
    let vfio = |source| OpenError::Vfio { bdf: bdf.to_string(), source };
    let owning = device.bar(bar as usize).ok_or_else(|| OpenError::NoBar {
        bdf: bdf.to_string(),
        bar,
        path: dir.join(format!("resource{bar}")),
    })?;
    let len = owning.len();
    if len == 0 || !len.is_multiple_of(4) || len > 1 << 32 {
        return Err(OpenError::BadSize { path: dir.join(format!("resource{bar}")), len });
    }
    Ok(if owning.is_mappable() {
        Box::new(owning.map(.., Permissions::ReadWrite).map_err(vfio)?)
    } else {
        Box::new(owning)
    })
}

fn io_err(what: &str, offset: u32, source: io::Error) -> AccessError {
    AccessError::Io { what: format!("VFIO {what} at {offset:#x}"), source }
}

impl RegisterAccess for VfioBar {
    fn bar_size(&self) -> u64 {
        self.region.len()
    }
    fn read32(&mut self, offset: u32) -> Result<u32, AccessError> {
        check_range(self.bar_size(), offset, 4)?;
        self.region.read_le_u32(offset as u64).map_err(|e| io_err("read", offset, e))
    }
    fn write32(&mut self, offset: u32, value: u32) -> Result<(), AccessError> {
        check_range(self.bar_size(), offset, 4)?;
        self.region.write_le_u32(offset as u64, value).map_err(|e| io_err("write", offset, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::fake;
    use std::fs;

    const NIC: (u16, u16) = (PCI_VENDOR_ID, PCI_DEVICE_ID);

    fn paths(root: &Path, with_vfio: bool) -> VfioPaths {
        let dev_vfio = root.join("dev/vfio");
        if with_vfio {
            fs::create_dir_all(&dev_vfio).unwrap();
            fs::write(dev_vfio.join("vfio"), "").unwrap();
        }
        VfioPaths { sysfs: root.join("sys"), dev_vfio }
    }

    #[test]
    fn missing_dev_vfio_says_modprobe() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path(), false);
        fake::device(&p.sysfs, "0000:03:00.0", NIC, Some("vfio-pci"), Some(5), 4096);
        let e = check_setup(&p, "03:00.0").unwrap_err();
        assert!(matches!(e, OpenError::NoVfio { .. }), "{e}");
        assert!(e.to_string().contains("sudo modprobe vfio-pci"), "{e}");
    }

    #[test]
    fn device_not_bound_to_vfio_gives_the_bind_commands() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path(), true);
        fake::device(&p.sysfs, "0000:03:00.0", NIC, Some("xdma"), Some(5), 4096);
        let e = check_setup(&p, "0000:03:00.0").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, OpenError::NotBoundToVfio { .. }), "{msg}");
        assert!(msg.contains("bound to xdma, not vfio-pci"), "{msg}");
        assert!(msg.contains("echo 0000:03:00.0 | sudo tee /sys/bus/pci/devices/0000:03:00.0/driver/unbind"));
        assert!(msg.contains("echo vfio-pci | sudo tee /sys/bus/pci/devices/0000:03:00.0/driver_override"));
        assert!(msg.contains("echo 0000:03:00.0 | sudo tee /sys/bus/pci/drivers_probe"), "{msg}");
    }

    #[test]
    fn iommu_off_group_peers_and_group_node_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path(), true);
        fake::device(&p.sysfs, "0000:03:00.0", NIC, Some("vfio-pci"), None, 4096);
        let e = check_setup(&p, "0000:03:00.0").unwrap_err();
        assert!(e.to_string().contains("intel_iommu=on"), "{e}");

        fake::device(&p.sysfs, "0000:04:00.0", NIC, Some("vfio-pci"), Some(9), 4096);
        fake::device(&p.sysfs, "0000:04:00.1", (0x8086, 0x10FB), Some("ixgbe"), Some(9), 4096);
        let e = check_setup(&p, "0000:04:00.0").unwrap_err();
        assert!(e.to_string().contains("0000:04:00.1 is bound to ixgbe"), "{e}");

        fake::device(&p.sysfs, "0000:05:00.0", NIC, Some("vfio-pci"), Some(11), 4096);
        fake::device(&p.sysfs, "0000:00:01.0", (0x8086, 0x6F02), Some("pcieport"), Some(11), 0);
        let e = check_setup(&p, "0000:05:00.0").unwrap_err();
        assert!(matches!(e, OpenError::NoVfio { .. }), "no /dev/vfio/11 node: {e}");
        fs::write(p.dev_vfio.join("11"), "").unwrap();
        assert_eq!(check_setup(&p, "0000:05:00.0").unwrap(), ("0000:05:00.0".to_owned(), 11));
        assert_eq!(device_in_group(&p.sysfs, 11).unwrap(), "0000:05:00.0");
        assert!(matches!(device_in_group(&p.sysfs, 42), Err(OpenError::Io { .. })));
    }

    #[test]
    fn wrong_and_missing_devices() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path(), true);
        fake::device(&p.sysfs, "0000:02:00.0", (0x8086, 0x1572), Some("vfio-pci"), Some(3), 4096);
        assert!(matches!(check_setup(&p, "02:00.0"), Err(OpenError::WrongDevice { vendor: 0x8086, .. })));
        assert!(matches!(check_setup(&p, "07:00.0"), Err(OpenError::NoDevice { .. })));
    }

    /// Past the checks, the real VFIO open runs against this machine's /dev/vfio, which
    /// has no group 5: the failure is reported as a VFIO (or permission) error, not a panic.
    #[test]
    fn real_open_of_a_fake_device_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path(), true);
        fake::device(&p.sysfs, "0000:03:00.0", NIC, Some("vfio-pci"), Some(4242), 4096);
        fs::write(p.dev_vfio.join("4242"), "").unwrap();
        let e = VfioBar::open_in(&p, "0000:03:00.0", 0).err().unwrap();
        assert!(matches!(e, OpenError::Vfio { .. } | OpenError::GroupPermission { .. }), "{e}");
    }
}
