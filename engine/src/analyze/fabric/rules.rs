//! The fabric's findings: each check's mismatch ([`crate::analyze::fabric::checks`]) as a
//! finding naming its devices and configuration lines, and the source each value of the
//! marking policy came from, cited by the marking findings that judged the capture by it.

use crate::analyze::fabric::checks::rule;
use crate::analyze::fabric::report::FabricReport;
use crate::analyze::finding::{Evidence, Finding, Kind};
use crate::analyze::id::FrameNumber;
use crate::analyze::roce::report::PolicyReport;
use crate::analyze::rules::{About, Rules};

/// Each check's mismatch, as a finding of its kind, at the severity the check gave it.
pub(crate) fn fabric(r: &mut Rules<'_, FabricReport>) {
    for mismatch in &r.report.checks {
        let Some(rule) = rule(mismatch.code) else { continue };
        let kind = Kind { severity: mismatch.severity, ..rule.kind };
        let evidence = Evidence {
            count: 1,
            frames: mismatch.first_frame.map(FrameNumber::new).into_iter().collect(),
            devices: mismatch.devices.clone(),
            config_lines: mismatch.config_lines.clone(),
            ..Evidence::default()
        };
        r.add(About { kind, cause: rule.cause, action: rule.action }, mismatch.message.clone(), evidence);
    }
}

/// The marking findings whose expected value the capture was judged by came from the
/// configurations (not a default, not a flag that overrode them) cite the line it came from.
pub(crate) fn cite_policy(fabric: &FabricReport, judged_by: &PolicyReport, findings: &mut [Finding]) {
    let p = &fabric.policy;
    let lossless = p.lossless_priorities.contains(&judged_by.lossless_priority);
    let sources = [
        ("DATA_DSCP", judged_by.expected_data_dscp == p.data_dscp, &p.data_dscp_source),
        ("CNP_DSCP", judged_by.expected_cnp_dscp == p.cnp_dscp, &p.cnp_dscp_source),
        ("CNP_PCP", judged_by.expected_cnp_pcp == p.cnp_priority, &p.cnp_priority_source),
        (
            "DATA_PCP",
            lossless && judged_by.expected_data_pcp == judged_by.lossless_priority,
            &p.lossless_priorities_source,
        ),
        ("PFC_OTHER_PRIORITY", lossless, &p.lossless_priorities_source),
    ];
    for finding in findings.iter_mut() {
        let cited = sources.iter().find(|(code, from_configs, source)| {
            finding.code == *code && *from_configs && source.as_str() != crate::analyze::fabric::policy::DEFAULT_SOURCE
        });
        if let Some((_, _, source)) = cited {
            finding.message = format!("{} (expected by {source})", finding.message);
            finding.evidence.config_lines.push(source.to_string());
        }
    }
}
