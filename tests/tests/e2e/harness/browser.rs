//! A scripted browser for the approval page: reqwest with a cookie jar kept by host (as a
//! browser keeps cookies: not by port), redirects followed by hand so each hop's cookies are
//! stored, and the few HTML lookups the page tests need. The real browser (chromium over
//! WebDriver) is not part of the suite yet; this one sends what a browser sends for these pages.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use reqwest::header::{HeaderMap, SET_COOKIE};
use reqwest::{Method, Url};

/// One answer: its status, the URL it came from, its headers and its body.
#[derive(Debug)]
pub struct Page {
    pub status: u16,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    pub fn header(&self, name: &str) -> String {
        self.headers.get(name).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default()
    }

    /// The value of the first `attr="..."` following `marker` in the body.
    pub fn attr_after(&self, marker: &str, attr: &str) -> Option<String> {
        let at = self.body.find(marker)?;
        let rest = &self.body[at..];
        let start = rest.find(&format!("{attr}=\""))? + attr.len() + 2;
        let end = rest[start..].find('"')?;
        Some(rest[start..start + end].replace("&amp;", "&"))
    }
}

pub struct Browser {
    http: reqwest::Client,
    cookies: Mutex<HashMap<String, BTreeMap<String, String>>>,
}

impl Default for Browser {
    fn default() -> Self {
        equinix_mcp::install_crypto_provider();
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Browser { http, cookies: Mutex::default() }
    }
}

impl Browser {
    fn cookie_header(&self, url: &Url) -> Option<String> {
        let jar = self.cookies.lock().unwrap();
        let cookies = jar.get(url.host_str()?)?;
        (!cookies.is_empty()).then(|| cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; "))
    }

    fn store(&self, url: &Url, headers: &HeaderMap) {
        let mut jar = self.cookies.lock().unwrap();
        let cookies = jar.entry(url.host_str().unwrap().to_string()).or_default();
        for value in headers.get_all(SET_COOKIE) {
            let text = value.to_str().unwrap();
            let (pair, attributes) = text.split_once(';').unwrap_or((text, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if attributes.to_ascii_lowercase().contains("max-age=0") {
                cookies.remove(name.trim());
            } else {
                cookies.insert(name.trim().to_string(), value.trim().to_string());
            }
        }
    }

    /// The cookies this browser holds for `host`.
    pub fn cookies_of(&self, host: &str) -> BTreeMap<String, String> {
        self.cookies.lock().unwrap().get(host).cloned().unwrap_or_default()
    }

    /// Replaces the value of cookie `name` for `host`, as someone editing their browser's cookies.
    pub fn set_cookie(&self, host: &str, name: &str, value: &str) {
        self.cookies.lock().unwrap().entry(host.to_string()).or_default().insert(name.to_string(), value.to_string());
    }

    /// One request, no redirect followed.
    pub async fn send(
        &self,
        method: Method,
        url: &Url,
        form: Option<&[(&str, &str)]>,
        headers: &[(&str, &str)],
    ) -> Page {
        let mut request = self.http.request(method, url.clone());
        if let Some(cookie) = self.cookie_header(url) {
            request = request.header("cookie", cookie);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(fields) = form {
            let body: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
            request = request.header("content-type", "application/x-www-form-urlencoded").body(body);
        }
        let answer = request.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        let (status, headers) = (answer.status().as_u16(), answer.headers().clone());
        self.store(url, &headers);
        Page { status, url: url.clone(), headers, body: answer.text().await.unwrap() }
    }

    /// Follows `page`'s redirects (as GETs) to the end.
    async fn follow(&self, mut page: Page) -> Page {
        for _ in 0..10 {
            if !(300..400).contains(&page.status) {
                return page;
            }
            let next = page.url.join(&page.header("location")).unwrap();
            page = self.send(Method::GET, &next, None, &[]).await;
        }
        panic!("more than 10 redirects from {}", page.url)
    }

    pub async fn get(&self, url: &str) -> Page {
        let page = self.send(Method::GET, &Url::parse(url).unwrap(), None, &[]).await;
        self.follow(page).await
    }

    /// Submits a form from a page of `origin` as Chromium does: `Sec-Fetch-Site`, and `Origin`
    /// (`null` from the approval page, whose `Referrer-Policy` is `no-referrer`).
    pub async fn post(&self, url: &Url, fields: &[(&str, &str)], origin: &str) -> Page {
        let same = url.origin().ascii_serialization() == origin;
        let (site, sent) = if same { ("same-origin", "null") } else { ("cross-site", origin) };
        let page = self.send(Method::POST, url, Some(fields), &[("origin", sent), ("sec-fetch-site", site)]).await;
        self.follow(page).await
    }

    /// Opens an approval link and signs in at the test provider as `login`: the page it ends on.
    pub async fn sign_in(&self, link: &str, login: &str) -> Page {
        let login_page = self.begin_sign_in(link).await;
        self.log_in(&login_page, login).await
    }

    /// Opens an approval link and follows its sign-in link to the provider's login page.
    pub async fn begin_sign_in(&self, link: &str) -> Page {
        let page = self.get(link).await;
        let href =
            page.attr_after("id=\"sign-in\"", "href").unwrap_or_else(|| panic!("no sign-in link: {}", page.body));
        self.get(page.url.join(&href).unwrap().as_str()).await
    }

    /// Logs in as `login` on the provider's `login_page`: the page it ends on.
    pub async fn log_in(&self, login_page: &Page, login: &str) -> Page {
        let action = login_page
            .attr_after("<form", "action")
            .unwrap_or_else(|| panic!("no login form at {}: {}", login_page.url, login_page.body));
        let action = login_page.url.join(&action).unwrap();
        let origin = login_page.url.origin().ascii_serialization();
        let password = format!("pw-{login}");
        self.post(&action, &[("login", login), ("password", &password)], &origin).await
    }

    /// Decides on a signed-in approval page (`approve` or `decline`) with its anti-CSRF token.
    /// Posts `decision` on `page`'s form: a decline says why ("not this one"), an approval
    /// carries no comment.
    pub async fn decide(&self, page: &Page, decision: &str) -> Page {
        let reason = if decision == "decline" { "not this one" } else { "" };
        self.decide_saying(page, decision, reason).await
    }

    pub async fn decide_saying(&self, page: &Page, decision: &str, reason: &str) -> Page {
        let csrf =
            page.attr_after("name=\"csrf\"", "value").unwrap_or_else(|| panic!("no decision form: {}", page.body));
        let origin = page.url.origin().ascii_serialization();
        self.post(&page.url, &[("csrf", &csrf), ("decision", decision), ("reason", reason)], &origin).await
    }
}
