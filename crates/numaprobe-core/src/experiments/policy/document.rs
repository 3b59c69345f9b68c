//! The document of a policy plan before anything is measured: every case
//! and policy, with what each does in words and how to give a program the
//! same placement, skipped ones marked with why.

use super::PolicyPlan;
use crate::model::policy::{
    CaseResult, DataCase, PolicyKind, PolicyOutcome, PolicyParameters, PolicyReport, WeightsInfo,
};
use crate::timer::Timer;

fn description(case: DataCase) -> String {
    match case {
        DataCase::Independent => {
            "each thread streams its own array (AMD 40555 §3.1.1)".into()
        }
        DataCase::Shared => "all threads stream one array: in each pass every thread streams every slice, starting at its own and moving on at a barrier (AMD 40555 §3.1.2)".into(),
    }
}

fn policy_text(plan: &PolicyPlan, p: PolicyKind) -> (String, String) {
    let mems = crate::units::format_list(&plan.mem_nodes);
    let n = plan.node;
    match p {
        PolicyKind::FirstTouch => (
            "each pinned thread first touches the data it streams (NUMA-aware initialisation)".into(),
            "initialise data in the threads that use it, pinned (OMP_PROC_BIND=true, or numactl --cpunodebind per process)".into(),
        ),
        PolicyKind::Serial => (
            format!("one thread on node {n} touches all data before the others start: every page on node {n} (the serial-initialisation trap)"),
            format!("what a program gets when its main thread initialises everything; numactl --membind={n} forces the same"),
        ),
        PolicyKind::Interleave => (
            format!("MPOL_INTERLEAVE over nodes {mems}: pages round-robin"),
            format!("numactl --interleave={mems} PROGRAM"),
        ),
        PolicyKind::Weighted => (
            format!("MPOL_WEIGHTED_INTERLEAVE over nodes {mems}: pages in proportion to the kernel's weights"),
            format!("numactl --weighted-interleave={mems} PROGRAM"),
        ),
        PolicyKind::Preferred => (
            format!("MPOL_PREFERRED on node {n}: every page there while it has room"),
            format!("numactl --preferred={n} PROGRAM"),
        ),
        PolicyKind::Unpinned => (
            "threads not pinned, default policy: each touches its own data wherever the scheduler runs it (a non-NUMA-aware setup)".into(),
            "PROGRAM (no binding)".into(),
        ),
    }
}

/// The empty document of a plan: every case and policy, skipped ones marked.
pub fn empty_report(plan: &PolicyPlan) -> PolicyReport {
    let timer = Timer::get();
    let cases = plan
        .cases
        .iter()
        .map(|&case| CaseResult {
            case,
            description: description(case),
            policies: plan
                .policies
                .iter()
                .map(|&p| {
                    let (d, r) = policy_text(plan, p);
                    let mut o = PolicyOutcome::new(p, d, r);
                    o.skipped = plan.skip_reason(p);
                    o
                })
                .collect(),
        })
        .collect();
    let weights = WeightsInfo {
        supported: plan.weighted_unsupported.is_none() && !plan.kernel_weights.is_empty(),
        skip_reason: plan.weighted_unsupported.clone(),
        kernel: plan.kernel_weights.clone(),
        derived: plan
            .derived_weights
            .as_ref()
            .map(|d| d.0.clone())
            .unwrap_or_default(),
        derived_from: plan.derived_weights.as_ref().map(|d| d.1.clone()),
        reproduce: Vec::new(),
    };
    PolicyReport {
        schema: crate::SCHEMA.into(),
        command: "policy".into(),
        complete: false,
        interrupted: false,
        parameters: PolicyParameters {
            op: plan.op.name().into(),
            kernel: plan.op.spec_for(plan.width),
            vector_width: plan.width,
            size_bytes: plan.per_thread() * plan.threads.len() as u64,
            pages: plan.pages.name().into(),
            threads: plan.threads.clone(),
            cpu_nodes: plan.cpu_nodes.clone(),
            mem_nodes: plan.mem_nodes.clone(),
            node: plan.node,
            rounds: plan.rounds,
            sample_target_s: plan.sample_target_s,
            timer: timer.info(),
            definitions: vec![
                "independent: one pass = every thread streams its own array once".into(),
                "shared: one pass = every thread streams the whole shared array once (all slices, one after the other)".into(),
                "GB/s = bytes the kernels ask for (loads plus stores, 10^9 bytes/s) over the span from the first thread's start to the last one's end; time = that span per pass".into(),
            ],
        },
        weights,
        notes: plan.notes.clone(),
        cases,
        rankings: Vec::new(),
        advice: Vec::new(),
    }
}
