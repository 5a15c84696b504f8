//! oltp's throwaway servers, MariaDB and PostgreSQL, started for real by the executor on a port another process took
//! first, as a second run starting at once can take the port the first one picked: the start is tried again on a new
//! port, a few times, and a run whose every try meets a taken port fails saying so.

use culprit_core::model::{Revision, RunOutcome, RunRecord};
use culprit_run::executor::{run_once, JobRun, RunContext};
use culprit_run::program::oltp::Oltp;
use culprit_run::program::server::mariadb::MariadbHost;
use culprit_run::program::server::postgres::PostgresHost;
use culprit_run::program::server::PORT_TRIES;
use culprit_run::program::{free_local_port, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// oltp, whose first plans get the `taken` ports, which listeners of the test hold, and whose later plans pick free
/// ports as oltp's own do.
struct TakenFirst {
    taken: Vec<u16>,
    plans: AtomicUsize,
}

impl Program for TakenFirst {
    fn name(&self) -> &'static str {
        Oltp.name()
    }
    fn binary(&self) -> &'static str {
        Oltp.binary()
    }
    fn install_hint(&self) -> &'static str {
        Oltp.install_hint()
    }
    fn params(&self) -> &'static [ParamSpec] {
        Oltp.params()
    }
    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        let port = self.taken.get(self.plans.fetch_add(1, Ordering::SeqCst)).copied();
        Oltp.plan_on(p, ctx, &PostgresHost::detect(), &MariadbHost::detect(), &|| port.or_else(free_local_port))
    }
}

/// One short oltp run on `driver`'s throwaway server, whose first `taken` plans get ports a listener holds: the
/// record, the ports taken, and how many plans the run made.
fn run_with_ports_taken(driver: &str, taken: usize) -> (RunRecord, Vec<u16>, usize) {
    let listeners: Vec<TcpListener> = (0..taken).map(|_| TcpListener::bind(("127.0.0.1", 0)).unwrap()).collect();
    let ports: Vec<u16> = listeners.iter().map(|listener| listener.local_addr().unwrap().port()).collect();
    let program: &'static TakenFirst =
        Box::leak(Box::new(TakenFirst { taken: ports.clone(), plans: AtomicUsize::new(0) }));
    // The server's account (under root) must reach the scratch directory, whose path is too long for a socket
    // address, so that the server listens on a port.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let scratch_root = dir.path().join("s".repeat(90));
    let pairs = [("db_driver", driver), ("runtime", "1"), ("table_size", "100")];
    let params = Params::new("oltp", pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
    let job = JobRun {
        job_id: "id".into(),
        job_name: format!("oltp-{driver}"),
        testcase: "oltp".into(),
        params: Vec::new(),
        job_yaml: String::new(),
        program,
        program_params: params,
        monitors: Vec::new(),
        timeout: None,
        cwd: None,
        env: Vec::new(),
    };
    let ctx = RunContext {
        revision: Revision::Label { name: "x".into() },
        machine: culprit_run::machine::this_machine(),
        interval: Duration::from_secs(1),
        scratch_root: scratch_root.clone(),
        step_record: None,
    };
    let record = run_once(&job, &ctx, &Arc::new(AtomicBool::new(false))).expect("a record");
    // Whatever happened, the servers stopped and their scratch directories went.
    assert_eq!(std::fs::read_dir(&scratch_root).unwrap().count(), 0, "{record:?}");
    drop(listeners);
    (record, ports, program.plans.load(Ordering::SeqCst))
}

/// The metrics of a run that must have passed.
fn passed(record: &RunRecord) -> &BTreeMap<String, f64> {
    assert_eq!(record.outcome, RunOutcome::Ok, "{}", record.stderr);
    &record.metrics
}

#[test]
fn a_mariadb_whose_port_was_taken_starts_on_a_new_one() {
    let (record, ports, plans) = run_with_ports_taken("mysql", 2);
    assert!(passed(&record)["oltp.transactions"] >= 1.0, "{record:?}");
    assert_eq!(plans, 3, "{}", record.stderr);
    // Each try that met a taken port is in the run's stderr, once: MariaDB's words (each try's own log), and
    // Culprit's.
    for port in ports {
        let said = format!("Do you already have another server running on port: {port} ?");
        assert_eq!(record.stderr.matches(&said).count(), 1, "{}", record.stderr);
    }
    assert!(record.stderr.contains("failed on try 2 of 5 (another process took the throwaway server's port"));
}

#[test]
fn a_postgresql_whose_port_was_taken_starts_on_a_new_one() {
    let (record, ports, plans) = run_with_ports_taken("pgsql", 1);
    assert!(passed(&record)["oltp.transactions"] >= 1.0, "{record:?}");
    assert_eq!(plans, 2, "{}", record.stderr);
    assert!(record.stderr.contains(&format!("Is another postmaster already running on port {}?", ports[0])));
}

#[test]
fn a_port_taken_on_every_try_fails_the_run_saying_so() {
    let (record, _, plans) = run_with_ports_taken("mysql", PORT_TRIES as usize);
    assert_eq!(plans, PORT_TRIES as usize);
    let RunOutcome::Failed { reason } = &record.outcome else { panic!("{record:?}") };
    let said = "failed: exit status 1 on try 5 of 5 (another process took the throwaway server's port on 127.0.0.1 \
                first; each try picks a new port): ";
    assert!(reason.contains(said) && reason.ends_with("Got error: 98: Address already in use"), "{reason}");
}
