//! The sketch configurations compared by the papers, built from a kind and a memory size.

use super::{Elastic, SuMax, Tower};
use crate::trace::Packet;
use smartnic_contract::geometry::{InsertMode, SuMaxGeometry, TowerGeometry};
use smartnic_contract::FlowKey;

/// A named sketch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SketchKind {
    /// Count-Min, d=3 arrays of 32-bit counters.
    Cm,
    /// Conservative update, d=3 arrays of 32-bit counters.
    Cu,
    /// ElasticSketch (heavy part + 8-bit CM light part).
    Elastic,
    /// TowerSketch, d=5 (2/4/8/16/32-bit), Count-Min insertion.
    TowerCm,
    /// TowerSketch, d=5, exact conservative update.
    TowerCu,
    /// TowerSketch, d=5, approximate CU (running minimum, the hardware's mode).
    TowerAcu,
    /// SuMax, d=3, flow-size + delay + inter-arrival + last-arrival cells.
    Sumax,
}

impl SketchKind {
    pub const ALL: [SketchKind; 7] =
        [Self::Cm, Self::Cu, Self::Elastic, Self::TowerCm, Self::TowerCu, Self::TowerAcu, Self::Sumax];

    pub fn name(self) -> &'static str {
        match self {
            Self::Cm => "cm",
            Self::Cu => "cu",
            Self::Elastic => "elastic",
            Self::TowerCm => "tower-cm",
            Self::TowerCu => "tower-cu",
            Self::TowerAcu => "tower-acu",
            Self::Sumax => "sumax",
        }
    }

    /// Builds the sketch with `bytes` of counter memory (SketchINT's CPU configurations).
    pub fn build(self, bytes: u64) -> AnySketch {
        let tower = |widths: &[u8], mode| {
            let g = TowerGeometry::equal_memory(widths, bytes);
            AnySketch::Tower(Tower::new(g, mode).expect("valid built-in geometry"))
        };
        match self {
            Self::Cm => tower(&[32, 32, 32], InsertMode::Cm),
            Self::Cu => tower(&[32, 32, 32], InsertMode::Cu),
            Self::TowerCm => tower(&[2, 4, 8, 16, 32], InsertMode::Cm),
            Self::TowerCu => tower(&[2, 4, 8, 16, 32], InsertMode::Cu),
            Self::TowerAcu => tower(&[2, 4, 8, 16, 32], InsertMode::Acu),
            Self::Elastic => AnySketch::Elastic(Elastic::new(bytes)),
            Self::Sumax => {
                let mut g = SuMaxGeometry::with_depth(3, 1);
                g.depth = g.fit_depth(bytes);
                AnySketch::SuMax(SuMax::new(g).expect("valid built-in geometry"))
            }
        }
    }
}

/// Any of the software sketches, behind one insert/query interface.
#[derive(Clone, Debug)]
pub enum AnySketch {
    Tower(Tower),
    SuMax(SuMax),
    Elastic(Elastic),
}

impl AnySketch {
    #[inline]
    pub fn insert(&mut self, p: &Packet) {
        match self {
            Self::Tower(t) => t.insert(&p.key),
            Self::SuMax(s) => s.insert(&p.key, p.ts_ns, p.delay_ns()),
            Self::Elastic(e) => e.insert(&p.key),
        }
    }

    /// Records `packets` in order: the same counters as one [`AnySketch::insert`] each, but
    /// TowerSketch and SuMax take them through their prefetching batch paths.
    pub fn insert_packets(&mut self, packets: &[Packet]) {
        /// Keys per batch: large enough to amortise the prefetch ramp, small enough for the stack.
        const KEYS: usize = 256;
        match self {
            Self::Tower(t) => {
                let mut keys = [FlowKey::default(); KEYS];
                for chunk in packets.chunks(KEYS) {
                    for (k, p) in keys.iter_mut().zip(chunk) {
                        *k = p.key;
                    }
                    t.insert_batch(&keys[..chunk.len()]);
                }
            }
            Self::SuMax(s) => s.insert_packets(packets),
            Self::Elastic(_) => packets.iter().for_each(|p| self.insert(p)),
        }
    }

    /// Estimated packet count of `key`.
    pub fn query(&self, key: &FlowKey) -> u64 {
        match self {
            Self::Tower(t) => t.query(key),
            Self::SuMax(s) => s.query(key).size,
            Self::Elastic(e) => e.query(key),
        }
    }

    pub fn memory_bytes(&self) -> u64 {
        match self {
            Self::Tower(t) => t.memory_bytes(),
            Self::SuMax(s) => s.memory_bytes(),
            Self::Elastic(e) => e.memory_bytes(),
        }
    }
}

impl SketchKind {
    /// The sketch at the NIC's default geometry (TowerSketch: SketchINT's FPGA layout;
    /// SuMax: the NIC default). `None` for the software-only baselines, which need a size.
    pub fn build_nic(self) -> Option<AnySketch> {
        let tower = |mode| Tower::new(TowerGeometry::sketchint_fpga(), mode).expect("valid default");
        Some(match self {
            Self::TowerCm => AnySketch::Tower(tower(InsertMode::Cm)),
            Self::TowerCu => AnySketch::Tower(tower(InsertMode::Cu)),
            Self::TowerAcu => AnySketch::Tower(tower(InsertMode::Acu)),
            Self::Sumax => AnySketch::SuMax(SuMax::new(SuMaxGeometry::nic_default()).expect("valid default")),
            Self::Cm | Self::Cu | Self::Elastic => return None,
        })
    }
}

impl AnySketch {
    /// Zeroes every counter (a new epoch).
    pub fn clear(&mut self) {
        match self {
            Self::Tower(t) => t.clear(),
            Self::SuMax(s) => s.clear(),
            Self::Elastic(e) => e.clear(),
        }
    }
}
