//! `culprit serve`: a read-only web dashboard over the result store, for a farm's machines and the people reading
//! their results.
//!
//! Pages are HTML rendered on the server, without script: the robot's own text in `<pre>` blocks (its tables are
//! made to be pasted into mail), produced by the same functions the commands print with, so a page and the command
//! line cannot disagree. The routes:
//!
//! - `/`: what the store holds (as `culprit results`), the bisect sessions (as `culprit bisect list`), and forms for
//!   compare and track;
//! - `/bisect/{id}`: the session as `culprit bisect log ID`; `/bisect/{id}/report[?culprit=N]`: the report mail
//!   as `culprit report ID --format html [--culprit N]` renders it;
//! - `/compare?rev=BASE&rev=OTHER[&rev=...]`, optionally with `all=1`, `metric=REGEX`, `job=GLOB` and `machine=GLOB`:
//!   `culprit compare`'s table and headlines;
//! - `/track?metric=REGEX`, optionally with `job=GLOB`, `machine=GLOB`, and `repo=DIR` with `branch=REF`: `culprit
//!   track`'s change points, and a chart of each series. Without `repo=` the points are labels in the order of their
//!   first run, which is what the store alone can order; tested commits are ordered along a branch of their
//!   repository, a directory on the server.
//!
//! The store is synchronous, and PostgreSQL's blocking client runs a runtime of its own, which panics when started
//! inside another one. So every request opens its own read-only store handle and does all its store work on tokio's
//! blocking pool. An error is a page with the message the command line would print: 404 for a missing session,
//! revision or page, 400 for another request that cannot be answered as asked, 500 when the store itself fails.

use crate::cli::{CompareArgs, CompareFormat, ServeArgs};
use crate::cmd::track::{History, HistoryFilter, Order};
use crate::cmd::{bisect, compare, open_read_only_store, plot, report, results, track};
use crate::output::error_text;
use anyhow::{anyhow, bail, Context, Result};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use culprit_core::changepoint::TrackOptions;
use culprit_core::model::Revision;
use culprit_core::report::{escape_html as escape, Format};
use culprit_store::{RunFilter, SessionId, Store, StoreError};
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// Most charts a track page draws; each is some 100 kB of SVG, and a regex matching every monitor would draw hundreds.
const MAX_PLOTS: usize = 12;

/// Most requests working on the store at once. Each holds a store handle (a PostgreSQL connection, of which a server
/// allows a hundred by default, shared with the farm's machines); more requests wait their turn.
const MAX_STORE_REQUESTS: usize = 8;

/// How long a stopping server waits for pages still being made.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// One stylesheet for every page but the report, which brings its own.
const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
pre{font-family:monospace;background:#f6f6f6;padding:.6em;overflow-x:auto}\
nav{margin-bottom:1em;color:#555}.error{background:#fdecea;color:#8a1c14;white-space:pre-wrap}.note{color:#555}\
form{margin:.5em 0}input{font-family:monospace}svg{max-width:100%;height:auto;display:block;margin:1em 0}";

/// What every request needs: where the store is (`--db`), and how to name it on pages.
struct App {
    db: Option<PathBuf>,
    location: String,
}

/// A request's query string as its pairs, in order: `rev` may be given several times.
type Params = Vec<(String, String)>;

pub fn run(db: Option<PathBuf>, args: &ServeArgs) -> Result<ExitCode> {
    // Opened once before listening, so that a mistyped --db or an unreachable server fails at start rather than on
    // every page, and the store can be named. This is outside the runtime, where PostgreSQL's client may block.
    let location = match open_read_only_store(db.clone()) {
        Ok(store) => store.location(),
        // The --db value is not repeated here: a PostgreSQL URL may hold a password.
        Err(err) if needs_upgrade(&err) => {
            return Err(err.context(
                "the dashboard only reads the store, so it cannot upgrade its schema; `culprit results` with the same \
                 --db upgrades it (as does any other command of this culprit)",
            ));
        }
        Err(err) => return Err(err),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(MAX_STORE_REQUESTS)
        .build()
        .context("cannot start the server's runtime")?;
    let served = runtime.block_on(serve(Arc::new(App { db, location }), &args.listen));
    // A page still being made for a client that has gone away is not worth waiting for long: the store is only read.
    runtime.shutdown_timeout(SHUTDOWN_WAIT);
    served
}

/// Whether opening failed only because the store's schema is older than this culprit's, which a read-only store
/// cannot upgrade.
fn needs_upgrade(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(cause.downcast_ref::<StoreError>(), Some(StoreError::ReadOnly { action, .. }) if action.starts_with("upgrade"))
    })
}

async fn serve(app: Arc<App>, listen: &str) -> Result<ExitCode> {
    let stop = Stop {
        interrupt: signal(SignalKind::interrupt()).context("cannot handle Ctrl-C")?,
        terminate: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
    };
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("cannot listen on {listen}"))?;
    let bound = listener.local_addr().context("cannot read the address listened on")?;
    eprintln!("culprit: serving {} on http://{bound}/", app.location);
    let router = Router::new()
        .route("/", get(overview))
        .route("/compare", get(compare_page))
        .route("/track", get(track_page))
        .route("/bisect/{id}", get(bisect_page))
        .route("/bisect/{id}/report", get(report_page))
        .fallback(not_found)
        .with_state(app);
    axum::serve(listener, router).with_graceful_shutdown(stop).await.context("the server failed")?;
    eprintln!("culprit: stopped serving");
    Ok(ExitCode::SUCCESS)
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM, the ways a terminal and a service manager stop a server; the server then
/// finishes the requests under way and exits. Both are registered before listening, so a signal is never missed.
struct Stop {
    interrupt: Signal,
    terminate: Signal,
}

impl Future for Stop {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let interrupted = self.interrupt.poll_recv(cx).is_ready();
        if interrupted || self.terminate.poll_recv(cx).is_ready() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

async fn overview(State(app): State<Arc<App>>) -> Response {
    answer(app, overview_html).await
}

async fn compare_page(State(app): State<Arc<App>>, query: Result<Query<Params>, QueryRejection>) -> Response {
    match query {
        Ok(Query(params)) => answer(app, move |store, location| compare_html(store, location, &params)).await,
        Err(rejection) => bad_query(&app, rejection),
    }
}

async fn track_page(State(app): State<Arc<App>>, query: Result<Query<Params>, QueryRejection>) -> Response {
    match query {
        Ok(Query(params)) => answer(app, move |store, location| track_html(store, location, &params)).await,
        Err(rejection) => bad_query(&app, rejection),
    }
}

async fn bisect_page(State(app): State<Arc<App>>, id: Result<UrlPath<String>, PathRejection>) -> Response {
    match session_id(id, &app.location) {
        Ok(session) => answer(app, move |store, location| bisect_html(store, location, session)).await,
        Err(err) => error_page(status_of(&err), &err, &app.location),
    }
}

async fn report_page(
    State(app): State<Arc<App>>,
    id: Result<UrlPath<String>, PathRejection>,
    query: Result<Query<Params>, QueryRejection>,
) -> Response {
    let params = match query {
        Ok(Query(params)) => params,
        Err(rejection) => return bad_query(&app, rejection),
    };
    match session_id(id, &app.location) {
        Ok(session) => {
            answer(app, move |store, _| {
                // `culprit=N` chooses the mail of the Nth of several commits that share the change.
                let nth = match param(&params, "culprit") {
                    None => 0,
                    Some(n) => match n.parse::<usize>() {
                        Ok(n) if n >= 1 => n - 1,
                        _ => bail!("culprit={n} is not a culprit's number: give 1 for the first, 2 for the second"),
                    },
                };
                // The page is the report on its own, with no job file beside it: it carries the job.
                let (mut input, job_yaml) = report::from_bisect(store, session, None, nth)?;
                input.job_yaml = Some(job_yaml);
                // The farm's reporter, as `culprit report` on this machine would credit it.
                input.reported_by = report::configured_reporter(None)?;
                let html = culprit_core::report::render(&input, Format::Html)?;
                Ok(match &input.bisect {
                    Some(b) => linking_other_culprits(&html, session, b.contributors.len(), b.reported),
                    None => html,
                })
            })
            .await
        }
        Err(err) => error_page(status_of(&err), &err, &app.location),
    }
}

/// The report page of one of several commits that share a change, with links to the others' pages: the mail says
/// `culprit report ID --culprit N` makes them, which on the dashboard is `?culprit=N` (QA 58).
fn linking_other_culprits(html: &str, session: SessionId, count: usize, reported: usize) -> String {
    if count < 2 {
        return html.to_string();
    }
    let links: Vec<String> = (1..=count)
        .filter(|&n| n != reported + 1)
        .map(|n| format!("<a href=\"/bisect/{session}/report?culprit={n}\">{n}</a>"))
        .collect();
    let line = format!(
        "<p class=\"note\">This is the report of commit {} of the {count} that share the change; the others': \
         {}.</p>\n",
        reported + 1,
        links.join(", ")
    );
    match html.rfind("</body>") {
        Some(at) => format!("{}{line}{}", &html[..at], &html[at..]),
        None => format!("{html}{line}"),
    }
}

async fn not_found(State(app): State<Arc<App>>, uri: Uri) -> Response {
    let err = anyhow!(
        "there is no page {}; the pages are /, /compare?rev=BASE&rev=OTHER, /track?metric=REGEX, /bisect/ID and \
         /bisect/ID/report",
        uri.path()
    );
    error_page(StatusCode::NOT_FOUND, &err, &app.location)
}

/// Makes a page on the blocking pool with a store handle of its own, and turns its error, or its panic, into an
/// error page rather than a dropped connection.
async fn answer<F>(app: Arc<App>, make: F) -> Response
where
    F: FnOnce(&dyn Store, &str) -> Result<String> + Send + 'static,
{
    let shared = app.clone();
    let work = tokio::task::spawn_blocking(move || {
        let store = open_read_only_store(shared.db.clone())?;
        make(store.as_ref(), &shared.location)
    });
    match work.await {
        Ok(Ok(html)) => (StatusCode::OK, Html(html)).into_response(),
        Ok(Err(err)) => error_page(status_of(&err), &err, &app.location),
        Err(failed) => {
            let err = anyhow!("the page could not be made: {failed}");
            error_page(StatusCode::INTERNAL_SERVER_ERROR, &err, &app.location)
        }
    }
}

/// The status of a failed page: the store's own errors tell a missing or mistyped thing (4xx) from a failing store
/// (500), a culprit number past a session's culprits names a report that does not exist (404), a session that has
/// not finished has no report yet (409); any other error
/// comes from the request asking for what cannot be answered, such as two revisions no job ran at both.
fn status_of(err: &anyhow::Error) -> StatusCode {
    if err.chain().any(|cause| cause.is::<report::NoSuchCulprit>()) {
        return StatusCode::NOT_FOUND;
    }
    // A session that has not finished has no report yet: nothing is wrong with the request.
    if err.chain().any(|cause| cause.is::<report::Unfinished>()) {
        return StatusCode::CONFLICT;
    }
    match err.chain().find_map(|cause| cause.downcast_ref::<StoreError>()) {
        Some(StoreError::NotFound { .. } | StoreError::UnknownRevision { .. }) => StatusCode::NOT_FOUND,
        Some(StoreError::AmbiguousRevision { .. } | StoreError::BadRegex { .. } | StoreError::InvalidInput { .. }) => {
            StatusCode::BAD_REQUEST
        }
        Some(_) => StatusCode::INTERNAL_SERVER_ERROR,
        None => StatusCode::BAD_REQUEST,
    }
}

fn error_page(status: StatusCode, err: &anyhow::Error, location: &str) -> Response {
    let title = format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or("error"));
    let text = query_wording(&error_text(err));
    let body = format!("<h1>{}</h1>\n<pre class=\"error\">{}</pre>\n", escape(&title), escape(&text));
    (status, Html(layout(&title, location, &body))).into_response()
}

fn bad_query(app: &App, rejection: QueryRejection) -> Response {
    let err = anyhow!("cannot read the query string: {}", rejection.body_text());
    error_page(StatusCode::BAD_REQUEST, &err, &app.location)
}

/// The pages share the commands' messages, which name the flags that set a parameter (`--metric X`); on a page the
/// parameter is set in the address (`metric=X`), so the message names it that way. Only the flags a page takes as
/// parameters are renamed.
fn query_wording(text: &str) -> String {
    // A flag followed by one of these words is the subject of a sentence about it ("--metric takes a regex"), not
    // a flag with its value.
    const VERBS: [&str; 8] = ["takes", "is", "matches", "names", "orders", "must", "needs", "cannot"];
    let mut worded = text.to_string();
    for name in ["metric", "job", "machine", "repo", "branch", "culprit"] {
        for verb in VERBS {
            worded = worded.replace(&format!("--{name} {verb} "), &format!("{name}= {verb} "));
        }
        worded = worded.replace(&format!("--{name} "), &format!("{name}="));
    }
    // `--all` takes no value: the compare page's is `all=1`. The note of a table without a changed row said "--all
    // shows every row" where the page's own footnote said all=1 (QA 51).
    whole_flag_replaced(&worded, "--all", "all=1")
}

/// `text` with each `flag` that is a whole word (not the start of a longer flag such as `--allow-empty`) replaced.
fn whole_flag_replaced(text: &str, flag: &str, by: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(flag) {
        let after = &rest[at + flag.len()..];
        let whole = !after.starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_');
        out.push_str(&rest[..at]);
        out.push_str(if whole { by } else { flag });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The session id of a `/bisect/{id}` address. A number too large for an id names a session that cannot exist: it
/// is missing (404) like any other, not a malformed address.
fn session_id(given: Result<UrlPath<String>, PathRejection>, location: &str) -> Result<SessionId> {
    let UrlPath(given) = given.map_err(|rejection| anyhow!("cannot read the address: {}", rejection.body_text()))?;
    match given.parse::<i64>() {
        Ok(id) => Ok(SessionId(id)),
        Err(_) if !given.is_empty() && given.bytes().all(|b| b.is_ascii_digit()) => {
            Err(StoreError::NotFound { location: location.to_string(), what: format!("bisect session {given}") }.into())
        }
        Err(_) => bail!("'{given}' is not a bisect session id: give the number `culprit bisect list` shows"),
    }
}

/// A whole page: the title, the stylesheet, a line naming the store, then `body`.
fn layout(title: &str, location: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n\
         </head>\n<body>\n<nav><a href=\"/\">culprit</a> &middot; {}</nav>\n{body}</body>\n</html>\n",
        escape(title),
        escape(location)
    )
}

/// The first non-empty value of a query parameter (a form sends empty fields as `name=`).
fn param(params: &Params, name: &str) -> Option<String> {
    params.iter().find(|(k, v)| k == name && !v.trim().is_empty()).map(|(_, v)| v.trim().to_string())
}

fn flag(params: &Params, name: &str) -> bool {
    param(params, name).is_some_and(|v| matches!(v.as_str(), "1" | "on" | "true" | "yes"))
}

/// Percent-encodes a query value: everything but RFC 3986's unreserved characters.
fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn query_string(params: &[(&str, &str)]) -> String {
    params.iter().map(|(k, v)| format!("{}={}", url_encode(k), url_encode(v))).collect::<Vec<_>>().join("&")
}

/// Text in a `<pre>` block, escaped.
fn pre(text: &str) -> String {
    format!("<pre>{}</pre>\n", escape(text))
}

/// [`pre`], with each `bisect session N` the text names linked to that session's page (QA 58: the track page named
/// the session that bisected a change as text, one address away from its page).
fn pre_linking_sessions(text: &str) -> String {
    const NAMED: &str = "bisect session ";
    let escaped = escape(text);
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped.as_str();
    while let Some(at) = rest.find(NAMED) {
        let after = &rest[at + NAMED.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..at]);
        if digits == 0 {
            out.push_str(NAMED);
        } else {
            let id = &after[..digits];
            out.push_str(&format!("<a href=\"/bisect/{id}\">{NAMED}{id}</a>"));
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    format!("<pre>{out}</pre>\n")
}

fn overview_html(store: &dyn Store, location: &str) -> Result<String> {
    let mut body = format!("<h1>Culprit</h1>\n<p>The result store {}.</p>\n", escape(location));
    body.push_str("<h2>Results</h2>\n");
    body.push_str(&pre(&results::summary_text(store, &RunFilter::default())?));
    body.push_str("<h2>Bisect sessions</h2>\n");
    let rows = bisect::list_rows(store)?;
    if rows.len() < 2 {
        body.push_str("<p>No bisect session is stored.</p>\n");
    } else {
        // The table is `culprit bisect list`'s text; only its ids become links, to each session's page.
        body.push_str("<pre>");
        let text = results::render_columns(&rows);
        for (i, (line, row)) in text.lines().zip(&rows).enumerate() {
            match line.strip_prefix(row[0].as_str()).filter(|_| i > 0) {
                Some(rest) => {
                    let id = escape(&row[0]);
                    body.push_str(&format!("<a href=\"/bisect/{}\">{id}</a>{}\n", url_encode(&row[0]), escape(rest)));
                }
                None => body.push_str(&format!("{}\n", escape(line))),
            }
        }
        body.push_str("</pre>\n");
    }
    body.push_str(concat!(
        "<h2>Compare</h2>\n<form action=\"/compare\" method=\"get\">\n",
        "base <input name=\"rev\" size=\"24\" required> other <input name=\"rev\" size=\"24\" required>\n",
        "metric <input name=\"metric\" size=\"20\" placeholder=\"regex (optional)\">\n",
        "<label><input type=\"checkbox\" name=\"all\" value=\"1\"> every row</label>\n",
        "<button>compare</button>\n</form>\n",
        "<p class=\"note\">Revisions as <code>culprit results</code> lists them: a SHA or a prefix of it, ",
        "or a label. A link: <code>/compare?rev=BASE&amp;rev=OTHER</code>.</p>\n",
        "<h2>Track</h2>\n<form action=\"/track\" method=\"get\">\n",
        "metric <input name=\"metric\" size=\"24\" placeholder=\"regex\">\n",
        "repo <input name=\"repo\" size=\"24\" placeholder=\"directory on the server (optional)\">\n",
        "branch <input name=\"branch\" size=\"12\" placeholder=\"HEAD\">\n",
        "<button>track</button>\n</form>\n",
        "<p class=\"note\">Change points along the stored history. Without a repository the points are labels in the ",
        "order of their first run; tested commits are ordered along a branch of their repository.</p>\n",
    ));
    Ok(layout("culprit", location, &body))
}

fn compare_html(store: &dyn Store, location: &str, params: &Params) -> Result<String> {
    let revisions: Vec<String> =
        params.iter().filter(|(k, v)| k == "rev" && !v.trim().is_empty()).map(|(_, v)| v.trim().to_string()).collect();
    let [base, others @ ..] = revisions.as_slice() else {
        bail!("give the revisions to compare: /compare?rev=BASE&rev=OTHER (as `culprit results` lists them)")
    };
    if others.is_empty() {
        bail!("give a second revision to compare {base} with: /compare?rev={base}&rev=OTHER");
    }
    let args = CompareArgs {
        base: base.clone(),
        others: others.to_vec(),
        job: param(params, "job"),
        testcase: None,
        machine: param(params, "machine"),
        metric: param(params, "metric"),
        all: flag(params, "all"),
        format: CompareFormat::Table,
        json: false,
        lkp_rules: false,
        min_change: None,
        by: None,
        plot: None,
        repo: None,
    };
    let rendered = compare::render(store, &args)?;
    // The title is the command line that prints this table, filters included: two tabs of one pair, one per
    // metric=, read the same in a browser's tab bar and history when it named the revisions alone.
    let mut title = format!("culprit compare {}", revisions.join(" "));
    for (option, value) in [("--job", &args.job), ("--machine", &args.machine), ("--metric", &args.metric)] {
        if let Some(value) = value {
            title.push_str(&format!(" {option} {value}"));
        }
    }
    if args.all {
        title.push_str(" --all");
    }
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    // The table's footnotes say how the command line shows every row; on this page that is `all=1`.
    body.push_str(&pre(&rendered.text.replace("--all shows every row", "all=1 shows every row")));
    for warning in &rendered.warnings {
        body.push_str(&format!("<p class=\"note\">{}</p>\n", escape(&query_wording(warning))));
    }
    // The same comparison with the other choice of rows, keeping every other parameter.
    let mut pairs: Vec<(&str, &str)> = params
        .iter()
        .filter(|(k, v)| k != "all" && !v.trim().is_empty())
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let label = if args.all {
        "only the changed rows"
    } else {
        pairs.push(("all", "1"));
        "every row"
    };
    body.push_str(&format!("<p><a href=\"/compare?{}\">{label}</a></p>\n", escape(&query_string(&pairs))));
    Ok(layout(&title, location, &body))
}

fn track_html(store: &dyn Store, location: &str, params: &Params) -> Result<String> {
    let repo = param(params, "repo");
    let branch = param(params, "branch");
    if branch.as_deref().is_some_and(|b| b.starts_with('-')) {
        bail!("branch= names a branch, tag or commit; it cannot start with '-'");
    }
    let filter = HistoryFilter {
        job: param(params, "job"),
        testcase: None,
        machine: param(params, "machine"),
        metric: param(params, "metric"),
        excluded_runs: Default::default(),
    };
    let options = TrackOptions::default();
    let (history, along, order_note, sessions) = match &repo {
        Some(dir) => {
            let top = culprit_run::git::toplevel(Path::new(dir))?;
            let branch = branch.as_deref().unwrap_or("HEAD");
            let history = track::history(store, &Order::Branch { repo: &top, branch }, &filter, &options)?;
            let note = format!(
                "Points are the tested commits along the first-parent history of {branch} in {}.",
                top.display()
            );
            // Each change names the session that bisected it, as `culprit track` does.
            let sessions = track::covering_sessions(store, &store.bisect_sessions()?, &top, &history)?;
            (history, branch.to_string(), note, sessions)
        }
        None if branch.is_some() => {
            bail!("branch= orders commits along a branch of their repository: give the repository too, with repo=DIR")
        }
        None => {
            let history =
                track::history(store, &Order::Labels, &filter, &options).map_err(|err| commits_need_repo(store, err))?;
            let note = "Points are labels in the order of their first run, which is what the store alone can order. \
                        Tested commits are ordered along a branch of their repository: add repo=DIR (a git \
                        repository on this server) and branch=REF (default HEAD) to the address."
                .to_string();
            (history, "the labels' first runs".to_string(), note, HashMap::new())
        }
    };
    let History { series, analyses, notes, .. } = history;
    let text = track::history_text(&series, &analyses, &sessions, &notes, &along);
    let title = match param(params, "metric") {
        Some(metric) => format!("culprit track --metric {metric}"),
        None => "culprit track".to_string(),
    };
    let mut body = format!("<h1>{}</h1>\n<p class=\"note\">{}</p>\n", escape(&title), escape(&order_note));
    body.push_str(&pre_linking_sessions(&text));
    // The series with a change point come first, the most significant first as `track --plot` picks them, so a cap
    // leaves out only flat ones where it can.
    let order = plot::chart_order(&analyses);
    if series.len() > MAX_PLOTS {
        body.push_str(&format!(
            "<p class=\"note\">{} series match; the charts of the first {MAX_PLOTS} are drawn, those with a change \
             point first. A narrower metric= draws the others.</p>\n",
            series.len()
        ));
    }
    for &k in order.iter().take(MAX_PLOTS) {
        let (s, (_, analysis)) = (&series[k], &analyses[k]);
        let svg = culprit_plot::render_svg(&plot::track_chart(s, analysis))
            .with_context(|| format!("plotting {} of {} on {}", s.metric, s.job_name, s.machine))?;
        body.push_str(&svg);
        body.push('\n');
    }
    Ok(layout(&title, location, &body))
}

/// A `/track` without `repo=` reads labels only. When that fails on a store whose runs are at commits (a follow's
/// store holds nothing else), the labels' own error ("matches no metric") would contradict the store, so the
/// answer says instead that the commits were skipped and how to order them.
fn commits_need_repo(store: &dyn Store, err: anyhow::Error) -> anyhow::Error {
    // A bad regex or a failing store is its own answer, whatever the store holds.
    if err.chain().any(|cause| cause.downcast_ref::<StoreError>().is_some()) {
        return err;
    }
    let (commits, labels) = match store.list_runs(&RunFilter::default()) {
        Ok(runs) => runs.iter().fold((0, 0), |(c, l), r| match r.revision {
            Revision::Commit { .. } => (c + 1, l),
            Revision::Label { .. } => (c, l + 1),
        }),
        Err(_) => (0, 0),
    };
    if commits == 0 {
        return err;
    }
    // Of a store without labels, the labels' error is about no runs at all: it said "metric=elapsed matches no
    // metric of the runs; they have command.elapsed_time, ...", naming the skipped runs' metrics.
    let skipped = match labels {
        0 => format!("this store's {commits} run(s) are all at commits"),
        _ => {
            let why = query_wording(&format!("{err:#}"));
            format!("the {commits} run(s) at commits in this store are skipped ({why})")
        }
    };
    anyhow!(
        "without repo= only labels are tracked, and {skipped}. Commits are ordered along a branch of their \
         repository: add repo=DIR (a git repository on this server that holds them) and, if not HEAD, branch=REF to \
         the address"
    )
}

fn bisect_html(store: &dyn Store, location: &str, session: SessionId) -> Result<String> {
    let replayed = bisect::replay(store, session)?;
    let log = bisect::log_text(store, &replayed, session);
    let title = format!("culprit bisect log {session}");
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    // An unfinished session has no report yet: its page said so only as a 400 behind a link (QA 45b), so the link
    // is left out and the page says how the session goes on.
    let Some(outcome) = replayed.machine.outcome() else {
        // Whether a process drives it (and where) or it waits for `--resume` on its machine, as its report says.
        let unfinished = report::Unfinished::of(store, &replayed.stored);
        body.push_str(&format!(
            "<p>{}, so it has no report yet (a session a <code>culprit track --follow</code> pass started goes on \
             with the next pass).</p>\n",
            escape(&unfinished.to_string())
        ));
        body.push_str(&pre(&log));
        return Ok(layout(&title, location, &body));
    };
    body.push_str(&format!(
        "<p><a href=\"/bisect/{session}/report\">the report</a> (as <code>culprit report {session} --format html</code>)"
    ));
    // Several commits that share the change get a mail each.
    let count = outcome.culprits.len();
    if count > 1 {
        let links: Vec<String> =
            (1..=count).map(|n| format!("<a href=\"/bisect/{session}/report?culprit={n}\">{n}</a>")).collect();
        body.push_str(&format!(
            "; the report of each of the {count} commits that share the change: {}",
            links.join(", ")
        ));
    }
    body.push_str("</p>\n");
    body.push_str(&pre(&log));
    Ok(layout(&title, location, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qa58_a_report_of_one_of_several_culprits_links_the_others() {
        let html = "<html><body><p>mail</p>\n</body>\n</html>\n";
        let page = linking_other_culprits(html, SessionId(7), 3, 1);
        let links =
            "the others': <a href=\"/bisect/7/report?culprit=1\">1</a>, <a href=\"/bisect/7/report?culprit=3\">3</a>.";
        assert!(page.contains(links) && page.contains("commit 2 of the 3"), "{page}");
        assert!(page.find(links) < page.find("</body>"), "{page}");
        assert_eq!(linking_other_culprits(html, SessionId(7), 1, 0), html);
    }

    #[test]
    fn qa58_the_sessions_a_text_names_link_to_their_pages() {
        let text = "c3 +30% <regression>: bisect session 12 (`culprit bisect log 12`); a bisect session is...\n";
        assert_eq!(
            pre_linking_sessions(text),
            "<pre>c3 +30% &lt;regression&gt;: <a href=\"/bisect/12\">bisect session 12</a> (`culprit bisect log \
             12`); a bisect session is...\n</pre>\n"
        );
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(url_encode("a9ecb5c3d0+revert"), "a9ecb5c3d0%2Brevert");
        assert_eq!(url_encode("réglage été"), "r%C3%A9glage%20%C3%A9t%C3%A9");
        assert_eq!(query_string(&[("rev", "a&b"), ("all", "1")]), "rev=a%26b&all=1");
    }

    #[test]
    fn store_errors_decide_the_status() {
        let missing =
            anyhow::Error::new(StoreError::NotFound { location: "x.db".into(), what: "bisect session 9".into() });
        assert_eq!(status_of(&missing), StatusCode::NOT_FOUND);
        let regex = anyhow::Error::new(StoreError::BadRegex { pattern: "(".into(), reason: "unclosed".into() })
            .context("comparing job j");
        assert_eq!(status_of(&regex), StatusCode::BAD_REQUEST);
        let broken = anyhow::Error::new(StoreError::Busy { location: "x.db".into(), action: "list runs".into() });
        assert_eq!(status_of(&broken), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(status_of(&anyhow!("no job has runs at every one of a, b")), StatusCode::BAD_REQUEST);
        // A culprit number past a session's culprits names a report that does not exist.
        let culprit = anyhow::Error::new(report::NoSuchCulprit("bisect session 1 has no culprit 2".into()));
        assert_eq!(status_of(&culprit.context("the report")), StatusCode::NOT_FOUND);
    }

    #[test]
    fn session_ids_are_numbers() {
        let id = |text: &str| session_id(Ok(UrlPath(text.to_string())), "db");
        assert_eq!(id("12").ok(), Some(SessionId(12)));
        assert_eq!(id("12x").map_err(|e| status_of(&e)).unwrap_err(), StatusCode::BAD_REQUEST);
        // Too large for an id: no such session, not a malformed address.
        let huge = id("99999999999999999999").unwrap_err();
        assert_eq!(status_of(&huge), StatusCode::NOT_FOUND);
        assert!(huge.to_string().contains("bisect session 99999999999999999999 does not exist"), "{huge}");
    }

    #[test]
    fn messages_name_query_parameters_not_flags() {
        assert_eq!(
            query_wording("--metric 'x(' matches no metric of the runs. --metric takes a regex"),
            "metric='x(' matches no metric of the runs. metric= takes a regex"
        );
        assert_eq!(query_wording("--job 'fio-*' --machine lkp-1"), "job='fio-*' machine=lkp-1");
        // Flags a page does not take stay as they are.
        assert_eq!(query_wording("give --good REV"), "give --good REV");
        assert_eq!(
            query_wording("no metric changed; --all shows every row (--all shows them), --allow-empty"),
            "no metric changed; all=1 shows every row (all=1 shows them), --allow-empty"
        );
    }
}
