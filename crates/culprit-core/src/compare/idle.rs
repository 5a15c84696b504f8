//! The one rule of a stress-ng stressor that did no work, read from metric names: what the run summary, compare's
//! warning and the report's headline all say of a stressor stress-ng skipped.

/// The stressors among metric names that did no work: lkp's parser stores a stressor whose bogo-op count is 0 as
/// `stress-ng.<stressor>.fail: 1` and nothing else, and stress-ng exits 0 for a stressor it skipped (lkp's dccp job
/// on a kernel without DCCP), so the run is ok and measured nothing of it. `names` are the metric names to look
/// through (a run's metrics, a comparison's rows or those of one of its columns), with the `stress-ng.` prefix, and
/// `has` says whether a name is among them. The parser's `sigaction.fail` (stress-ng could not install its signal
/// handlers) names no stressor.
pub fn idle_stressors_among<'a>(names: impl IntoIterator<Item = &'a str>, has: impl Fn(&str) -> bool) -> Vec<&'a str> {
    names
        .into_iter()
        .filter_map(|name| name.strip_prefix("stress-ng.")?.strip_suffix(".fail"))
        .filter(|stressor| !stressor.contains('.') && *stressor != "sigaction")
        .filter(|stressor| !has(&format!("stress-ng.{stressor}.ops")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stressor_with_only_its_fail_metric_did_no_work() {
        let names = ["stress-ng.dccp.fail", "stress-ng.cpu.fail", "stress-ng.cpu.ops", "stress-ng.sigaction.fail"];
        let has = |name: &str| names.contains(&name);
        assert_eq!(idle_stressors_among(names, has), ["dccp"]);
        assert!(idle_stressors_among(["stress-ng.a.b.fail", "fio.fail"], |_| false).is_empty());
    }
}
