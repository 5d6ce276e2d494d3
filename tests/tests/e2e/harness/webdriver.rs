//! A real browser for the approval page: Debian's Chromium, headless, driven through its
//! ChromeDriver over W3C WebDriver (`.ci/install-chromium` installs both). The few commands the
//! tests need are spoken here over reqwest, JSON in and out.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use super::oidc::free_port;
use super::printed::Printed;

/// W3C WebDriver's key for an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Ends with the test: on drop the driver's whole process group is killed, the browser's
/// processes with it, so no Chromium outlives its test.
pub struct Chrome {
    _driver: tokio::process::Child,
    /// The driver's process group (its own, shared by the browser it starts).
    group: u32,
    _printed: Printed,
    /// The browser's profile and its own TMPDIR: Chromium leaves its singleton socket and
    /// scoped directories in TMPDIR when it is killed, and these go with the test.
    _scratch: tempfile::TempDir,
    session: String,
    http: reqwest::Client,
}

impl Chrome {
    /// A new headless Chromium with an empty profile.
    pub async fn start() -> Chrome {
        equinix_mcp::install_crypto_provider();
        let port = free_port();
        let scratch = tempfile::tempdir().unwrap();
        let (profile, tmp) = (scratch.path().join("profile"), scratch.path().join("tmp"));
        std::fs::create_dir(&tmp).unwrap();
        let mut driver = tokio::process::Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver runs (.ci/install-chromium installs it)");
        let group = driver.id().expect("a running chromedriver has a pid");
        let printed = Printed::new("chromedriver");
        printed.collect(driver.stdout.take().unwrap());
        printed.collect(driver.stderr.take().unwrap());
        let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
        let base = format!("http://127.0.0.1:{port}");
        super::wait::until("chromedriver to be ready", Duration::from_secs(30), async || {
            let ready = http.get(format!("{base}/status")).send().await;
            match ready {
                Ok(r) => r.json::<Value>().await.is_ok_and(|v| v["value"]["ready"] == true),
                Err(_) => false,
            }
        })
        .await;
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1000,1400",
            &format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args},
        }}});
        let answer: Value =
            http.post(format!("{base}/session")).json(&capabilities).send().await.unwrap().json().await.unwrap();
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {answer}\n{}", printed.text()))
            .to_string();
        Chrome {
            _driver: driver,
            group,
            _printed: printed,
            _scratch: scratch,
            session: format!("{base}/session/{session}"),
            http,
        }
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        if answer["value"].get("error").is_some() {
            panic!("WebDriver {path}: {}", answer["value"]);
        }
        answer["value"].clone()
    }

    pub async fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", Some(json!({"url": url}))).await;
    }

    pub async fn url(&self) -> String {
        self.command(reqwest::Method::GET, "/url", None).await.as_str().unwrap().to_string()
    }

    pub async fn source(&self) -> String {
        self.command(reqwest::Method::GET, "/source", None).await.as_str().unwrap().to_string()
    }

    /// Runs `script` (a function body) in the page and returns what it returns.
    pub async fn run(&self, script: &str) -> Value {
        self.run_with(script, json!([])).await
    }

    /// Runs `script` in whatever page is there, `None` when the browser could not (a page
    /// between two documents while a navigation commits): for polls that run across one.
    pub async fn try_run(&self, script: &str) -> Option<Value> {
        let body = json!({"script": script, "args": []});
        let answer = self.http.post(format!("{}/execute/sync", self.session)).json(&body).send().await.ok()?;
        let answer: Value = answer.json().await.ok()?;
        if answer["value"].get("error").is_some() { None } else { Some(answer["value"].clone()) }
    }

    /// Runs `script` with `args` (its `arguments`) and returns what it returns.
    pub async fn run_with(&self, script: &str, args: Value) -> Value {
        self.command(reqwest::Method::POST, "/execute/sync", Some(json!({"script": script, "args": args}))).await
    }

    /// Runs `script` (a function body whose last argument is its callback) with `args`, and
    /// returns what it passes the callback.
    pub async fn run_async(&self, script: &str, args: Value) -> Value {
        self.command(reqwest::Method::POST, "/execute/async", Some(json!({"script": script, "args": args}))).await
    }

    /// A virtual platform authenticator (WebDriver's WebAuthn extension) that keeps discoverable
    /// credentials, verifies its user and answers at once: its id.
    pub async fn add_authenticator(&self) -> String {
        let options = json!({
            "protocol": "ctap2",
            "transport": "internal",
            "hasResidentKey": true,
            "hasUserVerification": true,
            "isUserConsenting": true,
            "isUserVerified": true,
        });
        let id = self.command(reqwest::Method::POST, "/webauthn/authenticator", Some(options)).await;
        id.as_str().expect("an authenticator id").to_string()
    }

    /// Whether authenticator `id` verifies its user from now on.
    pub async fn set_user_verified(&self, id: &str, verified: bool) {
        let path = format!("/webauthn/authenticator/{id}/uv");
        self.command(reqwest::Method::POST, &path, Some(json!({"isUserVerified": verified}))).await;
    }

    /// The credentials authenticator `id` holds, private keys included.
    pub async fn credentials(&self, id: &str) -> Vec<Value> {
        let path = format!("/webauthn/authenticator/{id}/credentials");
        self.command(reqwest::Method::GET, &path, None).await.as_array().cloned().unwrap_or_default()
    }

    /// Puts `credential` (as [`Chrome::credentials`] lists one) into authenticator `id`.
    pub async fn add_credential(&self, id: &str, credential: &Value) {
        let path = format!("/webauthn/authenticator/{id}/credential");
        self.command(reqwest::Method::POST, &path, Some(credential.clone())).await;
    }

    /// The element `css` selects, once the page shows one (within 20 s).
    pub async fn find(&self, css: &str) -> String {
        let found = super::wait::first(Duration::from_secs(20), async || {
            let answer: Value = self
                .http
                .post(format!("{}/element", self.session))
                .json(&json!({"using": "css selector", "value": css}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            answer["value"][ELEMENT].as_str().map(str::to_string)
        })
        .await;
        match found {
            Some(id) => id,
            None => panic!("no element {css:?} at {} within 20 s: {}", self.url().await, self.source().await),
        }
    }

    pub async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.command(reqwest::Method::POST, &format!("/element/{id}/click"), Some(json!({}))).await;
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.command(reqwest::Method::POST, &format!("/element/{id}/value"), Some(json!({"text": text}))).await;
    }

    /// The text of the element `css` selects, as a person reads it: unfolded first when it is
    /// inside a closed `<details>` (the page folds the exact request and the component's words).
    pub async fn text(&self, css: &str) -> String {
        let id = self.find(css).await;
        let unfold = "for (let d = document.querySelector(arguments[0]); d; d = d.parentElement) \
                      if (d.tagName === 'DETAILS') d.open = true;";
        self.run_with(unfold, json!([css])).await;
        self.command(reqwest::Method::GET, &format!("/element/{id}/text"), None).await.as_str().unwrap().to_string()
    }

    /// Makes the page's viewport `width` × `height` CSS pixels (the window is sized, then
    /// corrected by whatever the browser keeps around the page).
    pub async fn viewport(&self, width: i64, height: i64) {
        let inner = || async {
            let v = self.run("return [window.innerWidth, window.innerHeight];").await;
            (v[0].as_i64().unwrap(), v[1].as_i64().unwrap())
        };
        let want = (width, height);
        let give_up = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut asked = want;
        loop {
            self.command(reqwest::Method::POST, "/window/rect", Some(json!({"width": asked.0, "height": asked.1})))
                .await;
            // the browser resizes in its own time (on a loaded machine, after the command has
            // answered): a reading taken at once can be the old size, so wait for the new one
            let settle = tokio::time::Instant::now() + Duration::from_secs(1);
            let mut got = inner().await;
            while got != want && tokio::time::Instant::now() < settle {
                tokio::time::sleep(Duration::from_millis(25)).await;
                got = inner().await;
            }
            if got == want || tokio::time::Instant::now() >= give_up {
                assert_eq!(got, want, "the viewport is the size asked for");
                return;
            }
            // what the browser keeps around the page: ask for that much more (a reading that was
            // still the old size is corrected on the next round)
            asked = (asked.0 + want.0 - got.0, asked.1 + want.1 - got.1);
        }
    }

    /// Where the element `css` selects is in the viewport: `[top, bottom, left, right]`.
    pub async fn rect(&self, css: &str) -> [f64; 4] {
        let r = self
            .run_with(
                "const r = document.querySelector(arguments[0]).getBoundingClientRect(); \
                 return [r.top, r.bottom, r.left, r.right];",
                json!([css]),
            )
            .await;
        std::array::from_fn(|i| r[i].as_f64().unwrap())
    }

    /// Whether the element `css` selects is wholly inside the viewport as the page stands (no
    /// scrolling).
    pub async fn in_first_screen(&self, css: &str) -> bool {
        let [top, bottom, left, right] = self.rect(css).await;
        let size = self.run("return [window.innerWidth, window.innerHeight];").await;
        let (w, h) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
        top >= 0.0 && left >= 0.0 && bottom <= h && right <= w && bottom > top
    }

    /// The serious and critical violations axe-core (the npm package, installed in tests/oauth)
    /// finds in the page as it stands, each as `rule: the elements`; empty when there are none.
    pub async fn accessibility_violations(&self) -> Vec<String> {
        let axe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth/node_modules/axe-core/axe.min.js");
        let source = std::fs::read_to_string(&axe)
            .unwrap_or_else(|e| panic!("{}: {e} (.ci/install-node installs axe-core)", axe.display()));
        self.run(&source).await;
        let found = self
            .run_async(
                "const done = arguments[arguments.length - 1]; \
                 axe.run(document, {resultTypes: ['violations']}).then( \
                   (r) => done(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical') \
                     .map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', '))), \
                   (e) => done(['axe failed: ' + e]));",
                json!([]),
            )
            .await;
        found.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Vec<u8> {
        use base64::Engine;
        let data = self.command(reqwest::Method::GET, "/screenshot", None).await;
        base64::engine::general_purpose::STANDARD.decode(data.as_str().unwrap()).unwrap()
    }

    /// Opens `link`, signs in at the test provider's login page as `login`, and waits until the
    /// browser is back on the approval page.
    pub async fn sign_in(&self, link: &str, login: &str) {
        self.log_in_at(link, login).await;
        self.find("#request").await;
    }

    /// Signs in as `login` from the approval page `link`, and stops at whatever page the sign-in
    /// returns to (a request's page only to whoever may read it).
    pub async fn log_in_at(&self, link: &str, login: &str) {
        self.goto(link).await;
        self.click("#sign-in").await;
        self.type_into("#login", login).await;
        self.type_into("#password", &format!("pw-{login}")).await;
        self.click("#submit").await;
        self.find("h1").await;
    }
}

impl Drop for Chrome {
    fn drop(&mut self) {
        // the driver's whole group, the browser's processes with it (they never leave the group)
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.group)])
            .stderr(Stdio::null())
            .status();
    }
}
