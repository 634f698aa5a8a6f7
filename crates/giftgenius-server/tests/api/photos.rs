//! Gift photos through our own origin (`/images/{id}.jpg`, `@2x.jpg`): fetched from the
//! catalog's URL on a local photo host (never the internet), resized to the card's two sizes and
//! kept; every way a photo can fail (too many bytes, too many pixels, not an image, too slow, a
//! private address without `--images-allow-private-hosts`) answers the lettered tile instead;
//! the cache keeps its bound; no id makes the route panic or leave `/images/`.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::get;
use giftgenius_server::config::Config;
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};
use serde_json::json;

use crate::support::{TestApp, call_as, spawn_app_with};

/// A 400 × 300 picture: a red left half, a blue right half (so the square crop is checkable).
fn picture(format: ImageFormat) -> Vec<u8> {
    let img =
        RgbaImage::from_fn(400, 300, |x, _| if x < 200 { Rgba([220, 20, 20, 255]) } else { Rgba([20, 20, 220, 255]) });
    let mut out = Vec::new();
    let img = if format == ImageFormat::Jpeg {
        DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(img).to_rgb8())
    } else {
        DynamicImage::ImageRgba8(img)
    };
    img.write_to(&mut Cursor::new(&mut out), format).unwrap();
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { 0xEDB8_8320 ^ (crc >> 1) } else { crc >> 1 };
        }
    }
    !crc
}

fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    chunk.extend_from_slice(&body);
    chunk.extend_from_slice(&crc32(&body).to_be_bytes());
    chunk
}

/// A valid PNG of 100 bytes that declares 100,000 × 100,000 pixels (30 GB decoded).
fn pixel_bomb() -> Vec<u8> {
    let mut ihdr = 100_000u32.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&100_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(png_chunk(b"IHDR", &ihdr));
    // A zlib stream of a few zero bytes: the start of the first row.
    png.extend(png_chunk(b"IDAT", &[0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]));
    png.extend(png_chunk(b"IEND", &[]));
    png
}

/// What the photo host saw: fetches per path and the headers of the last one.
#[derive(Clone, Default)]
struct Seen {
    fetches: Arc<Mutex<HashMap<String, usize>>>,
    headers: Arc<Mutex<Option<HeaderMap>>>,
}

/// Photos on 127.0.0.1:0, counted per path:
/// - `/photo.jpg` (also `?n=…`), `/photo.png`: a 400 × 300 picture;
/// - `/huge.jpg`: a JPEG signature then 300 KB, streamed (no Content-Length);
/// - `/bomb.png`: [`pixel_bomb`];
/// - `/page.html`: an HTML page; `/drawing.jpg`: an SVG sent as `image/jpeg`;
/// - `/hang.jpg`: never answers;
/// - `/moved.jpg`: a redirect to `/photo.jpg`;
/// - `/catalog.json`: an HTTP catalog with one gift, `rm-photo`, whose image is `/photo.jpg`.
struct PhotoHost {
    base: String,
    seen: Seen,
}

impl PhotoHost {
    async fn start() -> Self {
        let seen = Seen::default();
        let jpeg = picture(ImageFormat::Jpeg);
        let png = picture(ImageFormat::Png);
        let router = Router::new()
            .route("/photo.jpg", get(move || async move { ([("content-type", "image/jpeg")], jpeg) }))
            .route("/photo.png", get(move || async move { ([("content-type", "image/png")], png) }))
            .route(
                "/huge.jpg",
                get(|| async {
                    let chunks = (0..300).map(|i| {
                        let mut chunk = vec![0u8; 1024];
                        if i == 0 {
                            chunk[..3].copy_from_slice(&[0xFF, 0xD8, 0xFF]);
                        }
                        Ok::<_, std::io::Error>(chunk)
                    });
                    ([("content-type", "image/jpeg")], Body::from_stream(futures::stream::iter(chunks)))
                }),
            )
            .route("/bomb.png", get(|| async { ([("content-type", "image/png")], pixel_bomb()) }))
            .route(
                "/page.html",
                get(|| async { ([("content-type", "text/html")], "<!doctype html><p>Not a photo</p>") }),
            )
            .route(
                "/drawing.jpg",
                get(|| async {
                    (
                        [("content-type", "image/jpeg")],
                        r#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#,
                    )
                }),
            )
            .route("/hang.jpg", get(std::future::pending::<String>))
            .route("/moved.jpg", get(|| async { axum::response::Redirect::temporary("/photo.jpg") }))
            .route(
                "/catalog.json",
                get(|State(base): State<String>| async move {
                    axum::Json(json!([{
                        "id": "rm-photo", "title": "Remote Juggling Clubs", "price_minor": 1999,
                        "tags": ["juggling"], "merchant": "Remote Gifts", "image": format!("{base}/photo.jpg")
                    }]))
                    .into_response()
                }),
            )
            .layer(axum::middleware::from_fn_with_state(seen.clone(), count));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let base = format!("http://127.0.0.1:{port}");
        let router = router.with_state(base.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self { base, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn fetches(&self, path: &str) -> usize {
        self.seen.fetches.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

async fn count(
    State(seen): State<Seen>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    *seen.fetches.lock().unwrap().entry(request.uri().path().to_string()).or_default() += 1;
    *seen.headers.lock().unwrap() = Some(request.headers().clone());
    next.run(request).await
}

fn row(id: &str, image: Option<String>) -> String {
    json!({
        "id": id, "title": format!("Photo Test {id}"), "description": "A gift with a photo.",
        "price_minor": 2500, "merchant": "Lens & Light", "tags": ["photography"], "image": image
    })
    .to_string()
}

/// A catalog file of `(id, image)` rows next to the built-in merchants.
fn catalog_file(dir: &tempfile::TempDir, rows: &[(&str, Option<String>)]) -> PathBuf {
    let path = dir.path().join("photos.jsonl");
    let lines: Vec<String> = rows.iter().map(|(id, image)| row(id, image.clone())).collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

async fn app(catalog: PathBuf, customize: impl FnOnce(&mut Config)) -> TestApp {
    spawn_app_with(move |c| {
        c.catalogs = vec![catalog];
        c.images.images_allow_private_hosts = true;
        c.images.images_fetch_timeout_ms = 2_000;
        customize(c);
    })
    .await
}

struct Answer {
    status: u16,
    content_type: String,
    cache_control: String,
    body: Vec<u8>,
}

async fn get_image(app: &TestApp, file: &str) -> Answer {
    let response = reqwest::Client::new()
        .get(format!("{}/images/{file}", app.local_url))
        .header("cookie", "session=buyer-secret")
        .header("referer", "https://chat.example/c/private-conversation")
        .header("user-agent", "BuyersBrowser/1.0")
        .header("accept-language", "pt-BR")
        .send()
        .await
        .unwrap();
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let (content_type, cache_control) = (header("content-type"), header("cache-control"));
    let status = response.status().as_u16();
    Answer { status, content_type, cache_control, body: response.bytes().await.unwrap().to_vec() }
}

fn dimensions(jpeg: &[u8]) -> (u32, u32) {
    let img = image::load_from_memory_with_format(jpeg, ImageFormat::Jpeg).expect("a JPEG");
    (img.width(), img.height())
}

fn assert_tile(answer: &Answer, id: &str) {
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type, "image/svg+xml");
    assert_eq!(answer.cache_control, "public, max-age=60", "a fallback is not kept for a day");
    let svg = String::from_utf8(answer.body.clone()).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains(&format!("Photo Test {id}")), "{svg}");
}

#[tokio::test]
async fn a_photo_is_fetched_once_resized_to_both_sizes_and_kept() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = app(
        catalog_file(&dir, &[("ph-jpg", Some(host.url("/photo.jpg"))), ("ph-png", Some(host.url("/photo.png")))]),
        |_| {},
    )
    .await;

    let cold = Instant::now();
    let small = get_image(&app, "ph-jpg.jpg").await;
    let cold = cold.elapsed();
    assert_eq!((small.status, small.content_type.as_str()), (200, "image/jpeg"));
    assert_eq!(small.cache_control, "public, max-age=86400");
    assert_eq!(dimensions(&small.body), (96, 96));
    let warm = Instant::now();
    let large = get_image(&app, "ph-jpg@2x.jpg").await;
    let warm = warm.elapsed();
    assert_eq!((large.status, large.content_type.as_str()), (200, "image/jpeg"));
    assert_eq!(dimensions(&large.body), (192, 192));
    assert_eq!(get_image(&app, "ph-jpg.jpg").await.body, small.body);
    assert_eq!(host.fetches("/photo.jpg"), 1, "one fetch serves both sizes and every later request");
    println!(
        "photo: {} B at 96x96, {} B at 192x192; cold request {cold:?}, cached request {warm:?}",
        small.body.len(),
        large.body.len()
    );

    // The square is the middle of the 400 x 300 picture: red on the left, blue on the right.
    let img = image::load_from_memory_with_format(&large.body, ImageFormat::Jpeg).unwrap().to_rgb8();
    let (left, right) = (img.get_pixel(10, 96).0, img.get_pixel(181, 96).0);
    assert!(left[0] > 150 && left[2] < 100, "{left:?}");
    assert!(right[2] > 150 && right[0] < 100, "{right:?}");

    let png = get_image(&app, "ph-png@2x.jpg").await;
    assert_eq!((png.content_type.as_str(), dimensions(&png.body)), ("image/jpeg", (192, 192)));
}

#[tokio::test]
async fn the_merchant_host_learns_nothing_of_the_buyer() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = app(catalog_file(&dir, &[("ph-jpg", Some(host.url("/photo.jpg")))]), |_| {}).await;
    assert_eq!(get_image(&app, "ph-jpg.jpg").await.content_type, "image/jpeg");
    let headers = host.seen.headers.lock().unwrap().clone().unwrap();
    for name in ["cookie", "referer", "accept-language", "x-forwarded-for", "forwarded", "authorization", "origin"] {
        assert!(headers.get(name).is_none(), "{name} reached the merchant: {headers:?}");
    }
    assert!(headers["user-agent"].to_str().unwrap().starts_with("giftgenius-photos/"), "{headers:?}");
}

#[tokio::test]
async fn a_card_links_the_photo_only_for_a_gift_that_has_one() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = app(catalog_file(&dir, &[("ph-jpg", Some(host.url("/photo.jpg"))), ("ph-none", None)]), |_| {}).await;
    let client = app.client().await;
    let (_, sc) = call_as(
        &client,
        "u1",
        "suggest_gifts",
        // The test gifts' own name: "photography" alone now ranks the built-in merchants'
        // better-fitting photography gifts first (fit and variety), past the strip.
        json!({"relationship_type": "friend", "interests": ["photo test"], "limit": 12}),
    )
    .await;
    let urls: HashMap<&str, &str> = sc["gifts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["id"].as_str().unwrap(), g["image_url"].as_str().unwrap()))
        .collect();
    assert_eq!(urls["ph-jpg"], format!("{}/images/ph-jpg.jpg", app.base_url));
    assert_eq!(urls["ph-none"], format!("{}/images/ph-none.svg", app.base_url));
    // Asked for anyway, a gift without a photo answers its tile.
    assert_tile(&get_image(&app, "ph-none.jpg").await, "ph-none");
}

#[tokio::test]
async fn a_photo_that_cannot_be_had_answers_the_tile() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        ("ph-huge", Some(host.url("/huge.jpg"))),
        ("ph-bomb", Some(host.url("/bomb.png"))),
        ("ph-page", Some(host.url("/page.html"))),
        ("ph-drawing", Some(host.url("/drawing.jpg"))),
        ("ph-gone", Some(host.url("/nothing-here.jpg"))),
    ];
    let app = app(catalog_file(&dir, &rows), |c| c.images.images_max_bytes = 200_000).await;
    for (id, _) in rows {
        for file in [format!("{id}.jpg"), format!("{id}@2x.jpg")] {
            assert_tile(&get_image(&app, &file).await, id);
        }
    }
    // Each was tried once; the failure is remembered, so the @2x asked nobody again.
    for path in ["/huge.jpg", "/bomb.png", "/page.html", "/drawing.jpg"] {
        assert_eq!(host.fetches(path), 1, "{path}");
    }
}

#[tokio::test]
async fn a_photo_host_that_never_answers_gives_the_tile_within_the_timeout() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = app(catalog_file(&dir, &[("ph-hang", Some(host.url("/hang.jpg")))]), |c| {
        c.images.images_fetch_timeout_ms = 300
    })
    .await;
    let started = Instant::now();
    let answer = get_image(&app, "ph-hang.jpg").await;
    let took = started.elapsed();
    assert_tile(&answer, "ph-hang");
    assert_eq!(host.fetches("/hang.jpg"), 1);
    // The timeout is 300 ms; the rest is slack for a loaded test machine, far below a hang.
    assert!(took < Duration::from_millis(2_300), "took {took:?}");
}

#[tokio::test]
async fn private_addresses_are_refused_unless_the_flag_allows_them() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let by_name = host.url("/photo.jpg?by=name").replace("127.0.0.1", "localhost");
    let rows = [
        ("ph-literal", Some(host.url("/photo.jpg"))),
        ("ph-name", Some(by_name)),
        ("ph-moved", Some(host.url("/moved.jpg"))),
    ];
    let refusing = app(catalog_file(&dir, &rows), |c| c.images.images_allow_private_hosts = false).await;
    for (id, _) in &rows {
        assert_tile(&get_image(&refusing, &format!("{id}.jpg")).await, id);
    }
    assert_eq!(host.fetches("/photo.jpg") + host.fetches("/moved.jpg"), 0, "nothing reached the private host");

    let allowing = app(catalog_file(&dir, &rows), |_| {}).await;
    for (id, _) in &rows {
        assert_eq!(get_image(&allowing, &format!("{id}.jpg")).await.content_type, "image/jpeg", "{id}");
    }
    assert_eq!(host.fetches("/moved.jpg"), 1, "the redirect was followed");
}

#[tokio::test]
async fn the_photo_cache_keeps_its_bound_and_forgets_the_oldest() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<(String, Option<String>)> =
        ["a", "b", "c"].iter().map(|n| (format!("ph-{n}"), Some(host.url(&format!("/photo.jpg?n={n}"))))).collect();
    let rows: Vec<(&str, Option<String>)> = rows.iter().map(|(id, url)| (id.as_str(), url.clone())).collect();
    let app = app(catalog_file(&dir, &rows), |c| c.images.images_cache_entries = 2).await;
    for id in ["ph-a", "ph-b", "ph-c"] {
        assert_eq!(get_image(&app, &format!("{id}.jpg")).await.content_type, "image/jpeg");
        let (entries, bytes) = app.state.photos.cache_usage();
        assert!(entries <= 2 && bytes < 64 * 1024, "{entries} entries, {bytes} bytes");
    }
    assert_eq!(host.fetches("/photo.jpg"), 3);
    get_image(&app, "ph-c.jpg").await;
    assert_eq!(host.fetches("/photo.jpg"), 3, "the newest is kept");
    get_image(&app, "ph-a.jpg").await;
    assert_eq!(host.fetches("/photo.jpg"), 4, "the oldest was forgotten and fetched again");
}

#[tokio::test]
async fn an_http_catalogs_gift_gets_its_photo_the_same_way() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = app(catalog_file(&dir, &[("ph-none", None)]), |c| c.catalog_urls = vec![host.url("/catalog.json")]).await;
    let client = app.client().await;
    let (_, sc) =
        call_as(&client, "u1", "suggest_gifts", json!({"relationship_type": "friend", "interests": ["juggling"]}))
            .await;
    let card = sc["gifts"].as_array().unwrap().iter().find(|g| g["id"] == "rm-photo").expect("the remote gift");
    assert_eq!(card["image_url"], format!("{}/images/rm-photo.jpg", app.base_url));
    let photo = get_image(&app, "rm-photo@2x.jpg").await;
    assert_eq!((photo.content_type.as_str(), dimensions(&photo.body)), ("image/jpeg", (192, 192)));
    assert_eq!(get_image(&app, "rm-photo.svg").await.content_type, "image/svg+xml");
}

#[tokio::test]
async fn any_file_name_is_answered_without_leaving_images() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = app(catalog_file(&dir, &[("ph-jpg", Some(host.url("/photo.jpg")))]), |_| {}).await;
    for file in [
        "nope.jpg",
        "nope@2x.jpg",
        "nope.svg",
        "ph-jpg.png",
        "ph-jpg",
        "ph-jpg@3x.jpg",
        "..%2F..%2Fetc%2Fpasswd.jpg",
        "%2e%2e%2fph-jpg.jpg",
        "ph-jpg%00.jpg",
        "%F0%9F%8E%81.jpg",
        ".jpg",
        "@2x.jpg",
    ] {
        let answer = get_image(&app, file).await;
        assert_eq!(answer.status, 404, "{file}");
        assert_eq!(String::from_utf8_lossy(&answer.body), "no such image", "{file}");
    }
    let long = format!("{}.jpg", "a".repeat(5000));
    assert_eq!(get_image(&app, &long).await.status, 404);
    assert_eq!(host.fetches("/photo.jpg"), 0);
    assert_eq!(get_image(&app, "ph-jpg.jpg").await.status, 200, "and the server still answers");
}

/// An ACP session's line shows our copy of the gift's photo (never the merchant's URL), and
/// that URL serves it; a gift without a photo has no `images` (the lettered tile is no picture
/// of the product).
#[tokio::test]
async fn an_acp_line_item_shows_our_copy_of_the_photo() {
    let host = PhotoHost::start().await;
    let dir = tempfile::tempdir().unwrap();
    let rows = [("ph-jpg", Some(host.url("/photo.jpg"))), ("ph-none", None)];
    let app = app(catalog_file(&dir, &rows), crate::acp::with_platforms).await;
    let one = crate::acp::Platform::new(&app, crate::acp::KEY_ONE);
    let (status, session) = crate::acp::json_of(one.post("", "photo", &crate::acp::create_body("ph-jpg")).await).await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{session}");
    let url = format!("{}/images/ph-jpg.jpg", app.base_url);
    assert_eq!(session["line_items"][0]["images"], json!([url]), "{session}");
    let served = get_image(&app, "ph-jpg.jpg").await;
    assert_eq!((served.status, served.content_type.as_str()), (200, "image/jpeg"));

    let (_, without) = crate::acp::json_of(one.post("", "no-photo", &crate::acp::create_body("ph-none")).await).await;
    assert!(without["line_items"][0].get("images").is_none(), "{without}");
}
