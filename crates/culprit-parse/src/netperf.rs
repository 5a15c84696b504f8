//! Parser for netperf output, the import format of lkp-tests' `programs/netperf/parse`.
//!
//! Input: the concatenated reports of the netperf clients lkp starts in parallel (`netperf -4 -H 127.0.0.1 -t
//! TCP_STREAM|UDP_STREAM|SCTP_STREAM|TCP_RR|... -c -C -l <runtime>`), each a column header and a result row:
//!
//! ```text
//! Socket  Message  Elapsed      Messages                   CPU      Service
//! Size    Size     Time         Okay Errors   Throughput   Util     Demand
//! bytes   bytes    secs            #      #   10^6bits/sec % SS     us/KB
//!
//! 212992   65507   300.00    36395320      0    63577.2     24.11    3.977
//! 212992           300.00    35314623           61689.4     24.11    3.977
//! ```
//!
//! The unit is `Mbps` for stream tests (`10^6bits/sec`) and `tps` for request/response tests (`Trans. Rate per
//! sec`). Output: `Throughput_<unit>` (mean per client), `ThroughputRecv_<unit>` (mean of UDP receive rows, 0 when
//! none), `ThroughputBoth_<unit>`, the `_total_` sums of each (divided by the `Iterations` count when netperf ran
//! with confidence intervals) and `workload` (transactions, or packets for stream tests). Like lkp, a last line
//! without a newline is ignored. Unlike lkp, a result row missing its throughput, time or message size column (lkp
//! reads it as 0, and divides by a zero message size) is an error.

use crate::vm_scalability::ruby;
use crate::{Kind, ParseError, ParseInput, ParseOutput, Parser};
use regex::Regex;
use std::sync::OnceLock;

const PROGRAM: &str = "netperf";

pub struct Netperf;

impl Parser for Netperf {
    fn name(&self) -> &'static str {
        PROGRAM
    }
    fn kind(&self) -> Kind {
        Kind::Benchmark
    }
    fn read_output(&self, input: &ParseInput<'_>) -> Result<ParseOutput, ParseError> {
        parse_text(input.main)
    }
}

struct Patterns {
    mbps_units: Regex,
    tps_units: Regex,
    socket_header: Regex,
    send_recv_header: Regex,
    size_size_header: Regex,
    result_row: Regex,
    receive_row: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        // The patterns are constants, so a compile failure is a programming error caught by every test.
        // `\s` is spelled out as Ruby's ASCII whitespace class.
        let re = |p: &str| Regex::new(&p.replace("SP", r"[ \t\n\x0B\x0C\r]")).expect("constant netperf pattern");
        Patterns {
            mbps_units: re(r"^bytes.*secs.*10\^6bits"),
            tps_units: re(r"^bytes.*secs.SP+per sec"),
            socket_header: re(r"^Socket.*Elapsed.*"),
            send_recv_header: re(r"^SendSP+RecvSP+"),
            size_size_header: re(r"^SizeSP+SizeSP+"),
            result_row: re(r"[0-9]+SP+[0-9]+SP+[0-9]+SP+[0-9].*$"),
            receive_row: re(r"^[0-9]+SP+[0-9]+\.[0-9]+SP+[0-9]+SP+"),
        }
    })
}

fn position(words: &[&str], word: &str) -> Option<usize> {
    // lkp keeps the last matching column.
    words.iter().rposition(|w| *w == word)
}

fn parse_text(text: &str) -> Result<ParseOutput, ParseError> {
    let p = patterns();
    let mut throughput = 0.0_f64;
    // lkp starts the receive sum as the Integer 0 and prints it as `0` when no receive row was seen.
    let mut recv_throughput: Option<f64> = None;
    let mut num: u64 = 0;
    let mut recv_num: u64 = 0;
    let mut thp_index = 0usize;
    let mut recv_thp_index: i64 = 0;
    let mut time_index = 0usize;
    let mut pkt_index = 0usize;
    let mut iterations: u64 = 0;
    let mut unit: Option<&'static str> = None;
    let mut time = 0.0_f64;
    let mut pkt_size: Option<f64> = None;
    let mut saw_header = false;

    for (index, raw_line) in ruby::gets_lines(text).enumerate() {
        let Some(line) = ruby::chomp_bang(raw_line) else {
            continue;
        };
        if line.starts_with("Iterations") {
            iterations += 1;
        } else if p.mbps_units.is_match(line) {
            unit = Some("Mbps");
        } else if p.tps_units.is_match(line) {
            unit = Some("tps");
        } else if p.socket_header.is_match(line) {
            saw_header = true;
            let words = ruby::split_ws(line);
            pkt_index = position(&words, "Message").unwrap_or(pkt_index);
            time_index = position(&words, "Elapsed").unwrap_or(time_index);
        } else if p.send_recv_header.is_match(line) {
            saw_header = true;
            let words = ruby::split_ws(line);
            if let Some(i) = position(&words, "Rate") {
                thp_index = i;
                recv_thp_index = i as i64 - 2;
            }
        } else if p.size_size_header.is_match(line) {
            saw_header = true;
            let words = ruby::split_ws(line);
            if let Some(i) = position(&words, "Throughput") {
                thp_index = i;
                recv_thp_index = i as i64 - 2;
            }
        } else if p.result_row.is_match(line) {
            let data = ruby::split_ws(line);
            // lkp reads a column the row lacks as 0, which would be stored as a plausible throughput; here it is an
            // error naming the column.
            let field = |i: usize, what: &str| {
                data.get(i)
                    .copied()
                    .filter(|w| crate::dbench::ruby_num::number(w).is_some())
                    .map(ruby::to_f)
                    .ok_or_else(|| ParseError::Malformed {
                        program: PROGRAM,
                        line: index + 1,
                        detail: format!(
                            "the result row has no number in its {what} column (column {}, counting from 1), as \
                             the column header places it",
                            i + 1
                        ),
                    })
            };
            throughput += field(thp_index, "throughput")?;
            time = field(time_index, "elapsed time")?;
            if unit == Some("Mbps") {
                let size = field(pkt_index, "message size")?;
                if size <= 0.0 {
                    // The workload in packets divides by the message size.
                    return Err(ParseError::Malformed {
                        program: PROGRAM,
                        line: index + 1,
                        detail: format!("the message size is {size} bytes; expected a positive size"),
                    });
                }
                pkt_size = Some(size);
            }
            num += 1;
        } else if p.receive_row.is_match(line) {
            let data = ruby::split_ws(line);
            // lkp indexes `Throughput - 2`, which counts from the end when Throughput is column 0 or 1.
            let value = if recv_thp_index >= 0 {
                usize::try_from(recv_thp_index).ok().and_then(|i| data.get(i))
            } else {
                usize::try_from(data.len() as i64 + recv_thp_index).ok().and_then(|i| data.get(i))
            };
            *recv_throughput.get_or_insert(0.0) += value.map(|v| ruby::to_f(v)).unwrap_or(0.0);
            recv_num += 1;
        }
    }

    if num == 0 {
        return Err(if saw_header {
            ParseError::Truncated {
                program: PROGRAM,
                detail: "netperf column headers but no result row (a client killed before it reported?)".into(),
            }
        } else {
            ParseError::NoResults {
                program: PROGRAM,
                hint: "expected netperf's `Socket ... Elapsed` column header and result rows of numbers".into(),
            }
        });
    }

    let avg_throughput = throughput / num as f64;
    let avg_recv = match recv_throughput {
        Some(sum) if recv_num > 0 => Some(sum / recv_num as f64),
        _ => None,
    };
    let avg_both = avg_throughput + avg_recv.unwrap_or(0.0);
    if iterations > 0 {
        throughput /= iterations as f64;
        recv_throughput = recv_throughput.map(|r| r / iterations as f64);
    }
    let both_throughput = throughput + recv_throughput.unwrap_or(0.0);
    let mut workload = both_throughput * time;
    if unit == Some("Mbps") {
        let Some(pkt_size) = pkt_size else {
            return Err(ParseError::Malformed {
                program: PROGRAM,
                line: 0,
                detail: "the `10^6bits/sec` unit line comes after every result row, so the message size is unknown"
                    .into(),
            });
        };
        workload = workload * 1_000_000.0 / 8.0 / pkt_size;
    }

    let unit = unit.unwrap_or("");
    let show = |x: Option<f64>| x.map(crate::rubyfmt::float).unwrap_or_else(|| "0".into());
    let mut out = ParseOutput::default();
    out.push(format!("Throughput_{unit}"), crate::rubyfmt::float(avg_throughput));
    out.push(format!("ThroughputRecv_{unit}"), show(avg_recv));
    out.push(format!("ThroughputBoth_{unit}"), crate::rubyfmt::float(avg_both));
    out.push(format!("Throughput_total_{unit}"), crate::rubyfmt::float(throughput));
    out.push(format!("ThroughputRecv_total_{unit}"), show(recv_throughput));
    out.push(format!("ThroughputBoth_total_{unit}"), crate::rubyfmt::float(both_throughput));
    out.push("workload", crate::rubyfmt::float(workload));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "Socket  Message  Elapsed      Messages                   CPU      Service\n\
                          Size    Size     Time         Okay Errors   Throughput   Util     Demand\n\
                          bytes   bytes    secs            #      #   10^6bits/sec % SS     us/KB\n\n";

    #[test]
    fn netperf_zero_message_size_is_an_error() {
        let text = format!("{HEADER}212992   0   300.00    36395320      0    63577.2     24.11    3.977\n");
        match parse_text(&text) {
            Err(ParseError::Malformed { line: 5, detail, .. }) => assert!(detail.contains("message size"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn netperf_row_without_throughput_is_an_error() {
        let text = format!("{HEADER}212992   65507   300   36395320   0\n");
        match parse_text(&text) {
            Err(ParseError::Malformed { line: 5, detail, .. }) => assert!(detail.contains("throughput"), "{detail}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn netperf_good_row_parses() {
        let text = format!("{HEADER}212992   65507   300.00    36395320      0    63577.2     24.11    3.977\n");
        let out = parse_text(&text).map(|o| o.render()).unwrap_or_else(|e| e.to_string());
        assert!(out.starts_with("Throughput_Mbps: 63577.2\n"), "{out}");
    }
}
