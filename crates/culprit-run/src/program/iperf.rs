//! iperf3 over the loopback device (Debian: `iperf3`), as lkp's `iperf` runs it on a `cs-localhost` cluster: the
//! kernel's TCP or UDP stack, sender and receiver on one machine, so a change of the network stack, the scheduler or
//! the memory copy shows without a second machine or a NIC.
//!
//! One run is one shell script in the measured step, so that the servers, the clients and anything left of them are
//! one process group, which a timeout or an interrupt stops whole: `sessions` servers (`iperf3 -s -B 127.0.0.1 -p
//! PORT -1`, each ending after its one test) start in the background, the script waits until each listens (as
//! lkp's run script waits with `ss -tln`, here reading `/proc/net/tcp`), then runs the clients at once (`iperf3 -c
//! 127.0.0.1 -p PORT -J -t RUNTIME [-u] [-b RATE]`, each with `-i 10 -T <n>` when `sessions` is given, as lkp's),
//! waits for them, and prints their JSON documents one after the other, which `culprit_parse::iperf` reads as
//! lkp's parser does: `iperf.tcp.sender.bps`, `iperf.tcp.receiver.bps`, `iperf.udp.bps`, means over the sessions.
//!
//! | param | iperf3 option | default |
//! |---|---|---|
//! | `runtime` | `-t` | 300 (lkp's) |
//! | `protocol` | `tcp`, or `udp` (`-u`) | tcp |
//! | `sessions` | that many server and client pairs at once | 1 |
//! | `port` | the first server's port (`-p`; the others follow it) | free ports, chosen per run |
//! | `bitrate` | `-b` (Culprit's): the UDP target rate, `0` for as fast as it goes | iperf3's (1 Mbit/s for UDP) |
//!
//! lkp's UDP runs give no `-b`, so they measure iperf3's 1 Mbit/s default target rather than the stack; Culprit runs
//! a job as written, so such a job measures 1 Mbit/s as lkp's does, and `bitrate: 0` measures the stack. lkp's
//! `numactl` (binding servers and clients to CPUs) and `tune` (sysctls) are not taken: a job that gives them is
//! refused as giving params iperf does not accept, naming them.

use super::{ParamKind, ParamSpec, Params, Program, ProgramContext, ProgramError, ProgramPlan};
use crate::process::Invocation;
use culprit_core::words::counted;

pub struct Iperf;

const PROGRAM: &str = "iperf";

const INSTALL_HINT: &str = "install it with: apt-get install iperf3";

const SPECS: &[ParamSpec] = &[
    ParamSpec { name: "runtime", kind: ParamKind::Duration, doc: "run time (-t)" },
    ParamSpec { name: "protocol", kind: ParamKind::OneOf(&["tcp", "udp"]), doc: "tcp, or udp (-u)" },
    ParamSpec { name: "sessions", kind: ParamKind::Positive, doc: "server and client pairs at once" },
    ParamSpec { name: "port", kind: ParamKind::Positive, doc: "the first server's port (-p)" },
    ParamSpec { name: "bitrate", kind: ParamKind::Text, doc: "target rate (-b), 0 for unlimited" },
];

/// The most sessions a job may ask for: each is a server, a client and a port, and lkp's jobs use a handful.
const MAX_SESSIONS: u64 = 64;

/// How long the script waits for a server to listen before it says the server did not start.
const LISTEN_WAIT_TENTHS: u32 = 50;

fn bad(key: &str, value: &str, reason: impl Into<String>) -> ProgramError {
    ProgramError::BadParam { program: PROGRAM, key: key.into(), value: value.into(), reason: reason.into() }
}

/// A `-b` rate as iperf3 reads it: a number with an optional K, M, G or T suffix (bits per second).
fn bitrate(value: &str) -> Result<String, ProgramError> {
    let value = value.trim();
    let digits = value.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']);
    let suffixes = value.len() - digits.len();
    let number = !digits.is_empty() && digits.parse::<f64>().is_ok_and(|rate| rate.is_finite() && rate >= 0.0);
    if number && suffixes <= 1 && !digits.contains(['e', 'E', '+', '-']) {
        Ok(value.to_string())
    } else {
        Err(bad("bitrate", value, "expected a rate in bits per second such as 0 (unlimited), 100M or 10G"))
    }
}

/// Distinct free TCP ports on 127.0.0.1, `count` of them.
fn free_ports(count: u64, free_port: &dyn Fn() -> Option<u16>) -> Option<Vec<u16>> {
    let mut ports: Vec<u16> = Vec::new();
    let mut attempts = 0;
    while (ports.len() as u64) < count && attempts < count * 4 + 8 {
        attempts += 1;
        let port = free_port()?;
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    ((ports.len() as u64) == count).then_some(ports)
}

impl Iperf {
    /// The plan; `free_port` gives a free port on 127.0.0.1 when the job names none.
    pub fn plan_with(
        &self,
        p: &Params,
        ctx: &ProgramContext,
        free_port: &dyn Fn() -> Option<u16>,
    ) -> Result<ProgramPlan, ProgramError> {
        let secs = p.run_time_secs("runtime", "reads -t 0 as no time limit")?.unwrap_or(300);
        let udp = p.one_of("protocol", &["tcp", "udp"])?.is_some_and(|protocol| protocol == "udp");
        let sessions_given = p.get("sessions").is_some();
        let sessions = p.positive_count("sessions")?.unwrap_or(1);
        if sessions > MAX_SESSIONS {
            let reason = format!("at most {MAX_SESSIONS} server and client pairs run at once");
            return Err(bad("sessions", &sessions.to_string(), reason));
        }
        let ports: Vec<u16> = match p.positive_count("port")? {
            Some(first) => {
                let last = first.saturating_add(sessions - 1);
                if last > u64::from(u16::MAX) {
                    return Err(bad("port", &first.to_string(), format!("the ports {first}..{last} go past 65535")));
                }
                (first..=last).map(|port| port as u16).collect()
            }
            None => free_ports(sessions, free_port)
                .ok_or_else(|| bad("port", "", "no free TCP ports on 127.0.0.1 for the iperf3 servers"))?,
        };
        let rate = p.get("bitrate").map(bitrate).transpose()?;

        let dir = crate::process::shell_quote(&ctx.scratch_dir.display().to_string());
        let mut script = String::from("servers=''\n");
        for (n, port) in ports.iter().enumerate() {
            script.push_str(&format!(
                "iperf3 -s -B 127.0.0.1 -p {port} -1 >/dev/null 2>{dir}/server-{n}.err & server{n}=$!; \
                 servers=\"$servers $!\"\n"
            ));
        }
        // /proc/net/tcp lists a listening socket as `0100007F:<port in hex> 00000000:0000 0A`. A server that has
        // exited by then could not bind its port (another program holds it, whose listening socket the file shows
        // as well), and its clients would talk to that program, so the run stops with the server's words.
        for (n, port) in ports.iter().enumerate() {
            // One line, the server's words in it, since a failed run's reason is its last line of standard error.
            let stop = |what: &str| {
                format!(
                    "echo \"iperf3 server on port {port} {what}: $(tr '\\n' ' ' < {dir}/server-{n}.err)\" >&2; \
                     kill $servers 2>/dev/null; exit 1"
                )
            };
            script.push_str(&format!(
                "tries=0; until grep -qi ':{port:04X} 00000000:0000 0A' /proc/net/tcp; do tries=$((tries+1)); \
                 if [ $tries -gt {LISTEN_WAIT_TENTHS} ]; then {}; fi; sleep 0.1; done\n\
                 sleep 0.1; kill -0 $server{n} 2>/dev/null || {{ {}; }}\n",
                stop("did not start listening"),
                stop("exited")
            ));
        }
        let mut clients = String::from("clients=''\n");
        for (n, port) in ports.iter().enumerate() {
            let mut client = format!("iperf3 -c 127.0.0.1 -p {port}");
            if sessions_given {
                client.push_str(&format!(" -i 10 -T {n}"));
            }
            client.push_str(&format!(" -J -t {secs}"));
            if udp {
                client.push_str(" -u");
            }
            if let Some(rate) = &rate {
                client.push_str(&format!(" -b {rate}"));
            }
            clients.push_str(&format!("{client} >{dir}/client-{n}.json & clients=\"$clients $!\"\n"));
        }
        script.push_str(&clients);
        script.push_str("status=0\nfor client in $clients; do wait $client || status=$?; done\n");
        for n in 0..ports.len() {
            script.push_str(&format!("cat {dir}/client-{n}.json\n"));
        }
        // A server whose client never came (it failed first) would wait for ever; its run is over.
        script.push_str("kill $servers 2>/dev/null\nexit $status\n");
        // Messages name the run rather than quote 200 characters of its script, the servers' part alone.
        let first = ports.first().copied().unwrap_or_default();
        let label = format!(
            "iperf3 {} over 127.0.0.1, {} from port {first}, {secs} s",
            if udp { "udp" } else { "tcp" },
            counted(sessions, "session")
        );
        Ok(ProgramPlan::single(Invocation::new(["sh".to_string(), "-c".into(), script]).labelled(label)))
    }
}

impl Program for Iperf {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn binary(&self) -> &'static str {
        "iperf3"
    }
    fn install_hint(&self) -> &'static str {
        INSTALL_HINT
    }
    fn params(&self) -> &'static [ParamSpec] {
        SPECS
    }
    fn plan(&self, p: &Params, ctx: &ProgramContext) -> Result<ProgramPlan, ProgramError> {
        self.plan_with(p, ctx, &super::free_local_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ctx, params};

    fn script(pairs: &[(&str, &str)]) -> String {
        let ports = std::cell::Cell::new(40000);
        let next = || {
            ports.set(ports.get() + 1);
            Some(ports.get())
        };
        let plan = Iperf.plan_with(&params("iperf", pairs), &ctx(), &next).unwrap();
        assert_eq!(&plan.main.argv[..2], ["sh", "-c"]);
        plan.main.argv[2].clone()
    }

    #[test]
    fn one_tcp_session_on_a_free_port_as_lkps_non_session_form() {
        let script = script(&[("runtime", "5s")]);
        assert!(script.contains("iperf3 -s -B 127.0.0.1 -p 40001 -1 >/dev/null"), "{script}");
        assert!(script.contains("grep -qi ':9C41 00000000:0000 0A' /proc/net/tcp"), "40001 is 0x9C41: {script}");
        let client = "iperf3 -c 127.0.0.1 -p 40001 -J -t 5 >/tmp/culprit-scratch/client-0.json &";
        assert!(script.contains(client), "{script}");
        assert!(script.contains("cat /tmp/culprit-scratch/client-0.json\n"), "{script}");
        assert!(!script.contains(" -u"), "{script}");
        let plan = Iperf.plan_with(&params("iperf", &[("runtime", "5s")]), &ctx(), &|| Some(40001)).unwrap();
        assert_eq!(plan.main.summary(), "iperf3 tcp over 127.0.0.1, 1 session from port 40001, 5 s");
    }

    #[test]
    fn sessions_run_at_once_each_with_its_port_and_title() {
        let pairs = [("sessions", "3"), ("protocol", "udp"), ("bitrate", "0"), ("port", "5001"), ("runtime", "2")];
        let script = script(&pairs);
        for (n, port) in [(0, 5001), (1, 5002), (2, 5003)] {
            let client = format!("iperf3 -c 127.0.0.1 -p {port} -i 10 -T {n} -J -t 2 -u -b 0 >");
            assert!(script.contains(&client), "{client} in {script}");
        }
        // The clients start together: every one is sent to the background before the first wait.
        let last_client = script.rfind("iperf3 -c").unwrap();
        assert!(script.find("wait").unwrap() > last_client, "{script}");
    }

    #[test]
    fn bad_params_are_refused_before_running() {
        for (pairs, needle) in [
            (vec![("runtime", "0")], "give at least 1s"),
            (vec![("sessions", "0")], "0 would run nothing"),
            (vec![("sessions", "1000")], "at most 64"),
            (vec![("bitrate", "fast")], "bits per second"),
            (vec![("bitrate", "1MM")], "bits per second"),
            (vec![("port", "65535"), ("sessions", "2")], "past 65535"),
            (vec![("port", "18446744073709551615"), ("sessions", "2")], "past 65535"),
        ] {
            let err = Iperf.plan_with(&params("iperf", &pairs), &ctx(), &|| Some(4000)).unwrap_err();
            assert!(err.to_string().contains(needle), "{pairs:?}: {err}");
        }
        let err = Iperf.plan_with(&params("iperf", &[("sessions", "2")]), &ctx(), &|| Some(4000)).unwrap_err();
        assert!(err.to_string().contains("no free TCP ports"), "one port offered for two sessions: {err}");
        let p = params("iperf", &[("numactl", "true")]);
        assert!(p.validate(Iperf.params(), 4).unwrap_err().to_string().contains("unknown param 'numactl'"));
    }
}
