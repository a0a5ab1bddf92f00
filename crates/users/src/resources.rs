//! What a group's jobs ask of a machine of node types besides processors: GPUs, memory, a
//! partition and a GPU type ([`ResourceMix`]).
//!
//! A mix is a set of user profiles, each what one user of a site did (as `sitesim fit` finds it
//! in a sacct dump with TRES: [`ResourceProfile`]): the share of its jobs that used GPUs, the
//! CPUs per GPU of those jobs, its memory per CPU, and the partitions and GPU type its CPU and
//! GPU jobs ran in. Each simulated user draws one profile when it is built, in proportion to
//! the profiles' weights (their jobs), so a site gets GPU users and CPU users in the dump's
//! proportions; each job then is a GPU job with the profile's share, and asks for
//! `max(1, round(processors / cpus_per_gpu))` GPUs and `processors x memory_per_cpu` MiB. The
//! job's processors, runtime and estimate come from the user model as on any site, from its
//! own random stream; the resources come from a stream of their own
//! ([`crate::rng::Purpose::Resources`]), so a site with a mix submits the same jobs at the same
//! times as the same site without one, until the schedule differs.

use job::{Extra, Shape};
use rand::Rng;

/// One user's resource profile (see the module).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceProfile {
    /// How many jobs of the dump it stands for (the draw's weight).
    pub weight: f64,
    /// The share of its jobs that use GPUs, in [0, 1].
    pub gpu_share: f64,
    /// CPUs per GPU of its GPU jobs (> 0).
    pub cpus_per_gpu: f64,
    /// Memory per CPU, MiB.
    pub memory_per_cpu: u32,
    /// The partition number its CPU jobs run in (-1: the default partition).
    pub cpu_partition: i64,
    /// The partition number its GPU jobs run in (-1: the default partition).
    pub gpu_partition: i64,
    /// The type its GPU jobs ask for, as `Shape::gpu_type` numbers it (0: any).
    pub gpu_type: u8,
}

/// A group's resource mix: profiles and where their amounts go in a job's [`Extra`].
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceMix {
    profiles: Vec<ResourceProfile>,
    /// The profiles' cumulative weights, normalised to end at 1.
    cumulative: Vec<f64>,
    /// The index of memory (MiB) among the run's resource kinds, if memory is scheduled.
    memory_kind: Option<usize>,
    /// The index of GPUs among the run's resource kinds, if the machine has GPUs.
    gpu_kind: Option<usize>,
}

/// What a job asks besides its processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Memory and GPUs at their kinds.
    pub extra: Extra,
    /// Its GPU type (any nodes otherwise).
    pub shape: Shape,
    /// Its partition number (-1: the default partition).
    pub partition: i64,
}

impl Default for Request {
    /// Nothing besides processors, in the default partition.
    fn default() -> Request {
        Request {
            extra: Extra::NONE,
            shape: Shape::ANY,
            partition: -1,
        }
    }
}

impl ResourceMix {
    /// A mix of `profiles` (at least one, each of positive weight, shares in [0, 1], CPUs per
    /// GPU > 0: else an error saying which), on a machine whose memory and GPUs are the kinds
    /// `memory_kind` and `gpu_kind`.
    pub fn new(
        profiles: Vec<ResourceProfile>,
        memory_kind: Option<usize>,
        gpu_kind: Option<usize>,
    ) -> Result<ResourceMix, String> {
        if profiles.is_empty() {
            return Err("a resource mix needs at least one profile".to_string());
        }
        let mut total = 0.0;
        for (i, p) in profiles.iter().enumerate() {
            if !(p.weight.is_finite() && p.weight > 0.0) {
                return Err(format!("profile {i}: weight {} is not positive", p.weight));
            }
            if !(0.0..=1.0).contains(&p.gpu_share) {
                return Err(format!(
                    "profile {i}: gpu_share {} is not in [0, 1]",
                    p.gpu_share
                ));
            }
            if !(p.cpus_per_gpu.is_finite() && p.cpus_per_gpu > 0.0) {
                return Err(format!(
                    "profile {i}: cpus_per_gpu {} is not positive",
                    p.cpus_per_gpu
                ));
            }
            total += p.weight;
        }
        let mut sum = 0.0;
        let cumulative = profiles
            .iter()
            .map(|p| {
                sum += p.weight;
                sum / total
            })
            .collect();
        Ok(ResourceMix {
            profiles,
            cumulative,
            memory_kind,
            gpu_kind,
        })
    }

    /// The profiles.
    pub fn profiles(&self) -> &[ResourceProfile] {
        &self.profiles
    }

    /// The index of memory among the run's resource kinds, if memory is scheduled.
    pub fn memory_kind(&self) -> Option<usize> {
        self.memory_kind
    }

    /// The index of GPUs among the run's resource kinds, if the machine has GPUs.
    pub fn gpu_kind(&self) -> Option<usize> {
        self.gpu_kind
    }

    /// The profile a user drawing `u` (uniform in [0, 1)) gets, by index.
    pub fn profile_of(&self, u: f64) -> usize {
        self.cumulative
            .partition_point(|&c| c <= u)
            .min(self.profiles.len() - 1)
    }

    /// What a job of `processors` processors of a user of profile `profile` asks for, drawn
    /// from `rng` (one draw per job, whatever the outcome).
    pub fn request(&self, profile: usize, processors: u32, rng: &mut impl Rng) -> Request {
        let Some(p) = self.profiles.get(profile) else {
            return Request::default();
        };
        let gpu_job = rng.random::<f64>() < p.gpu_share && self.gpu_kind.is_some();
        let mut extra = Extra::NONE;
        if let Some(k) = self.memory_kind {
            let memory = u64::from(processors) * u64::from(p.memory_per_cpu);
            extra = extra.with(k, u32::try_from(memory).unwrap_or(u32::MAX));
        }
        let mut shape = Shape::ANY;
        let partition = if gpu_job {
            let gpus = (f64::from(processors) / p.cpus_per_gpu).round().max(1.0);
            if let Some(k) = self.gpu_kind {
                extra = extra.with(k, gpus.min(f64::from(u32::MAX)) as u32);
            }
            shape.gpu_type = p.gpu_type;
            p.gpu_partition
        } else {
            p.cpu_partition
        };
        Request {
            extra,
            shape,
            partition,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn profile(weight: f64, gpu_share: f64) -> ResourceProfile {
        ResourceProfile {
            weight,
            gpu_share,
            cpus_per_gpu: 4.0,
            memory_per_cpu: 2000,
            cpu_partition: 1,
            gpu_partition: 2,
            gpu_type: 1,
        }
    }

    #[test]
    fn users_draw_profiles_by_weight_and_jobs_their_gpus_by_share() {
        let mix =
            ResourceMix::new(vec![profile(3.0, 0.0), profile(1.0, 0.5)], Some(0), Some(1)).unwrap();
        assert_eq!((mix.profile_of(0.0), mix.profile_of(0.74)), (0, 0));
        assert_eq!((mix.profile_of(0.75), mix.profile_of(0.999)), (1, 1));
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let cpu = mix.request(0, 8, &mut rng);
        assert_eq!(
            (cpu.partition, cpu.extra.get(0), cpu.extra.get(1)),
            (1, 16000, 0)
        );
        let mut gpu_jobs = 0;
        for _ in 0..1000 {
            let r = mix.request(1, 8, &mut rng);
            if r.extra.get(1) > 0 {
                gpu_jobs += 1;
                assert_eq!((r.partition, r.extra.get(1), r.shape.gpu_type), (2, 2, 1));
            } else {
                assert_eq!(r.partition, 1);
            }
        }
        assert!((400..600).contains(&gpu_jobs), "{gpu_jobs}");
        assert!(ResourceMix::new(vec![profile(0.0, 0.5)], None, None).is_err());
        assert!(ResourceMix::new(vec![profile(1.0, 1.5)], None, None).is_err());
    }
}
