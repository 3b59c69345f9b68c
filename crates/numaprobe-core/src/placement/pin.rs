//! Thread pinning: `sched_setaffinity` on the calling thread, checked with
//! `sched_getcpu`, limited to the CPUs the process was allowed when it started.

use super::PlacementError;
use std::sync::OnceLock;

/// The CPUs this process may use: the affinity mask of the process's main
/// thread (which already reflects `taskset` and the cgroup cpuset), read once.
///
/// Read once because pinning our own threads narrows their masks; the set a
/// user may ask for must not shrink because an earlier measurement pinned a
/// thread. The main thread is never pinned by numaprobe's binary; a library
/// user who pins their main thread before the first placement call narrows
/// this set to that pin.
pub fn allowed_cpus() -> Result<Vec<u32>, PlacementError> {
    static ALLOWED: OnceLock<Vec<u32>> = OnceLock::new();
    if let Some(v) = ALLOWED.get() {
        return Ok(v.clone());
    }
    // The main thread's id is the process id: its mask is the process's mask
    // even when this call comes from an already pinned worker.
    let pid = unsafe { libc::getpid() };
    let v = affinity_of(pid)?;
    Ok(ALLOWED.get_or_init(|| v).clone())
}

fn affinity_of(tid: libc::pid_t) -> Result<Vec<u32>, PlacementError> {
    // SAFETY: cpu_set_t is plain data; the kernel fills at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(PlacementError::last_os("sched_getaffinity"));
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect())
}

/// The calling thread's current affinity mask (to restore it after a pin).
pub fn current_affinity() -> Result<Vec<u32>, PlacementError> {
    affinity_of(0)
}

/// Set the calling thread's affinity without the allowed-set check or the
/// `sched_getcpu` verification; meant for restoring a mask saved with
/// [`current_affinity`].
pub fn set_current_affinity(cpus: &[u32]) -> Result<(), PlacementError> {
    let set = cpu_set(cpus)?;
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(PlacementError::last_os("sched_setaffinity"));
    }
    Ok(())
}

fn cpu_set(cpus: &[u32]) -> Result<libc::cpu_set_t, PlacementError> {
    if cpus.is_empty() {
        return Err(PlacementError::EmptyCpuSet);
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c as usize >= max {
            return Err(PlacementError::CpuNotAllowed {
                cpu: c,
                allowed: allowed_cpus().unwrap_or_default(),
            });
        }
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    Ok(set)
}

/// The CPU the calling thread runs on right now (`sched_getcpu`).
pub fn current_cpu() -> Result<u32, PlacementError> {
    let c = unsafe { libc::sched_getcpu() };
    if c < 0 {
        return Err(PlacementError::last_os("sched_getcpu"));
    }
    Ok(c as u32)
}

/// The CPU and the NUMA node the calling thread runs on (`getcpu`), in one
/// call so the two agree.
pub fn current_cpu_and_node() -> Result<(u32, u32), PlacementError> {
    let mut cpu: libc::c_uint = 0;
    let mut node: libc::c_uint = 0;
    // SAFETY: getcpu writes two unsigned ints; the third argument is unused
    // since Linux 2.6.24 and may be NULL.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut libc::c_uint,
            &mut node as *mut libc::c_uint,
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    if rc != 0 {
        return Err(PlacementError::last_os("getcpu"));
    }
    Ok((cpu, node))
}

/// Pin the calling thread to `cpus` and check it.
///
/// Every CPU must be in [`allowed_cpus`]; otherwise the error names the
/// allowed set. After `sched_setaffinity` the kernel has migrated the thread
/// (a self-migration completes before the call returns); we still ask
/// `sched_getcpu`, yielding a few times if needed, and return the CPU observed.
/// Fails with [`PlacementError::PinNotHonoured`] if the thread is seen outside
/// the set, which would mean something (a hypervisor, a cgroup change) is
/// overriding us and the measurement must not go on.
pub fn pin_current_thread(cpus: &[u32]) -> Result<u32, PlacementError> {
    if cpus.is_empty() {
        return Err(PlacementError::EmptyCpuSet);
    }
    let allowed = allowed_cpus()?;
    if let Some(&bad) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(PlacementError::CpuNotAllowed { cpu: bad, allowed });
    }
    set_current_affinity(cpus)?;
    let mut observed = current_cpu()?;
    for _ in 0..100 {
        if cpus.contains(&observed) {
            return Ok(observed);
        }
        std::thread::yield_now();
        observed = current_cpu()?;
    }
    Err(PlacementError::PinNotHonoured {
        wanted: cpus.to_vec(),
        observed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_to_each_allowed_cpu_is_observed() {
        let allowed = allowed_cpus().unwrap();
        assert!(!allowed.is_empty());
        std::thread::spawn(move || {
            for &c in &allowed {
                assert_eq!(pin_current_thread(&[c]).unwrap(), c);
                let (cpu, _node) = current_cpu_and_node().unwrap();
                assert_eq!(cpu, c);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pin_outside_allowed_set_names_the_set() {
        let e = pin_current_thread(&[100_000]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("CPU 100000 is not allowed"), "{msg}");
        assert!(msg.contains("allowed CPUs: "), "{msg}");
        assert!(matches!(
            pin_current_thread(&[]),
            Err(PlacementError::EmptyCpuSet)
        ));
    }
}
