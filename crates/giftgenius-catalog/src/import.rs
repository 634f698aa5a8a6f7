//! Reading catalog files into gifts: the one catalog schema (a JSON array of gift objects, or
//! the same objects as JSON Lines) and Google Merchant Center's TSV product feed.
//!
//! Every bad row is reported with its file, line and field, so a merchant can fix the feed;
//! whether a bad row is skipped or refuses the whole catalog is the caller's choice
//! (`--catalog-bad-rows`). A file that cannot be read at all (not JSON, no header) is an
//! error of the file, never silently an empty catalog.
//!
//! The schema, with its defaults, is documented in `docs/catalog.md`; the built-in merchants'
//! files (`crates/giftgenius-catalog/catalog/*.json`) use it too.

use std::collections::HashMap;
use std::sync::Arc;

use giftgenius_types::{Merchant, Occasion, RelationshipType};
use serde::Deserialize;

use super::{CatalogGift, Set, Tag, Tags};

/// Stock of a gift whose row does not say (the bench format has no stock).
pub const DEFAULT_STOCK: u32 = 100;
/// Oldest recipient age a gift can be for, and the default `age_max`.
pub const MAX_AGE: i64 = 120;
/// Longest title, description and tag we keep (longer is a bad row, not a truncation).
const MAX_TITLE: usize = 200;
const MAX_DESCRIPTION: usize = 2_000;
const MAX_TAG: usize = 50;
const MAX_TAGS: usize = 50;
/// Row errors kept in full; past this they are only counted.
const MAX_KEPT_ERRORS: usize = 1_000;

/// The formats a catalog file can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `[ {gift}, {gift}, … ]`
    JsonArray,
    /// One gift object per line.
    JsonLines,
    /// Google Merchant Center's tab-separated feed, header row first.
    GoogleMerchantTsv,
}

impl Format {
    /// By extension (`.json`, `.jsonl`/`.ndjson`, `.tsv`/`.txt`), else by the first byte
    /// (`[` an array, `{` JSON Lines, anything else a TSV feed).
    pub fn detect(name: &str, bytes: &[u8]) -> Format {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
            return Format::JsonLines;
        }
        if lower.ends_with(".tsv") || lower.ends_with(".txt") {
            return Format::GoogleMerchantTsv;
        }
        if lower.ends_with(".json") {
            return Format::JsonArray;
        }
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'[') => Format::JsonArray,
            Some(b'{') => Format::JsonLines,
            _ => Format::GoogleMerchantTsv,
        }
    }
}

/// One bad row: where it is and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}: {}", self.file, self.line, self.field, self.message)
    }
}

/// What reading one or more files gave.
#[derive(Debug, Default)]
pub struct Parsed {
    pub gifts: Vec<CatalogGift>,
    /// The first row errors in full.
    pub errors: Vec<RowError>,
    /// Every bad row, including those past the kept ones.
    pub bad_rows: usize,
    /// The line of each gift in its file, parallel to `gifts` (to name duplicates).
    lines: Vec<(Arc<str>, usize)>,
}

impl Parsed {
    fn bad(&mut self, file: &str, line: usize, field: &str, message: impl Into<String>) {
        self.bad_rows += 1;
        if self.errors.len() < MAX_KEPT_ERRORS {
            self.errors.push(RowError { file: file.into(), line, field: field.into(), message: message.into() });
        }
    }

    /// Appends another file's result, skipping gifts whose id an earlier row already uses.
    /// The ids are looked up borrowed, not copied, and the first file's gifts are taken as they
    /// are, not moved one by one into a second vector (issue 28: both doubled the load's memory
    /// for a moment at a million gifts).
    pub fn extend(&mut self, mut other: Parsed) {
        let duplicates: Vec<(usize, String)> = {
            let mut seen: foldhash::HashMap<&str, (&Arc<str>, usize)> =
                foldhash::HashMap::with_capacity_and_hasher(self.gifts.len() + other.gifts.len(), Default::default());
            for (gift, (file, line)) in self.gifts.iter().zip(&self.lines) {
                seen.insert(&gift.id, (file, *line));
            }
            let mut duplicates = Vec::new();
            for (i, (gift, (file, line))) in other.gifts.iter().zip(&other.lines).enumerate() {
                match seen.entry(&gift.id) {
                    std::collections::hash_map::Entry::Occupied(first) => {
                        let (first_file, first_line) = first.get();
                        duplicates.push((i, format!("id {} is already used at {first_file}:{first_line}", gift.id)));
                    }
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert((file, *line));
                    }
                }
            }
            duplicates
        };
        if !duplicates.is_empty() {
            for (i, message) in &duplicates {
                let (file, line) = &other.lines[*i];
                self.bad(file, *line, "id", message.as_str());
            }
            let mut dropped = duplicates.iter().map(|(i, _)| *i).peekable();
            let mut keep = Vec::with_capacity(other.gifts.len());
            for i in 0..other.gifts.len() {
                let duplicate = dropped.peek() == Some(&i);
                if duplicate {
                    dropped.next();
                }
                keep.push(!duplicate);
            }
            let mut flags = keep.iter();
            other.gifts.retain(|_| *flags.next().unwrap_or(&true));
            let mut flags = keep.iter();
            other.lines.retain(|_| *flags.next().unwrap_or(&true));
        }
        if self.gifts.is_empty() {
            self.gifts = other.gifts;
            self.lines = other.lines;
        } else {
            self.gifts.append(&mut other.gifts);
            self.lines.append(&mut other.lines);
        }
        self.bad_rows += other.bad_rows;
        let room = MAX_KEPT_ERRORS.saturating_sub(self.errors.len());
        self.errors.extend(other.errors.into_iter().take(room));
    }
}

/// Merchants and tags seen so far, so a million gifts share a few `Arc<Merchant>`s, and the gifts
/// with the same tags one list of them (issue 28: a `Vec<String>` of tags per gift was ~150 bytes
/// of a gift's ~540 at a million gifts). Kept for one load only.
#[derive(Debug, Default)]
pub struct Merchants {
    merchants: HashMap<String, Arc<Merchant>>,
    /// The merchants of rows without a `merchant_id`, by the name they give.
    by_name: HashMap<String, Arc<Merchant>>,
    tags: foldhash::HashSet<Tag>,
    tag_lists: foldhash::HashSet<Tags>,
}

impl Merchants {
    /// The merchant `id` (by default the slug of its name); the first name given for an id stays.
    fn get(&mut self, id: Option<String>, name: &str) -> Arc<Merchant> {
        let id = match id {
            Some(id) => id,
            // Most rows name their merchant the way the row before did: no slug, no copy.
            None => match self.by_name.get(name) {
                Some(merchant) => return merchant.clone(),
                None => {
                    let merchant = self.get(Some(slug(name)), name);
                    self.by_name.insert(name.to_string(), merchant.clone());
                    return merchant;
                }
            },
        };
        if let Some(merchant) = self.merchants.get(&id) {
            return merchant.clone();
        }
        let merchant = Arc::new(Merchant { id: id.clone(), name: name.to_string() });
        self.merchants.insert(id, merchant.clone());
        merchant
    }

    /// The shared list of `tags` (each shared too).
    fn tags(&mut self, tags: &[&str]) -> Tags {
        let list: Vec<Tag> = tags
            .iter()
            .map(|&tag| match self.tags.get(tag) {
                Some(shared) => shared.clone(),
                None => {
                    let shared = Tag::from(tag);
                    self.tags.insert(shared.clone());
                    shared
                }
            })
            .collect();
        if let Some(shared) = self.tag_lists.get(list.as_slice()) {
            return shared.clone();
        }
        let shared = Tags::from(list);
        self.tag_lists.insert(shared.clone());
        shared
    }
}

/// Parses one file's bytes. `Err` is a problem with the file as a whole.
pub fn parse(file: &str, bytes: &[u8], format: Format, merchants: &mut Merchants) -> Result<Parsed, String> {
    let default_merchant = default_merchant_name(file);
    let mut out = Parsed::default();
    let file_arc: Arc<str> = Arc::from(file);
    let accept = |out: &mut Parsed, line: usize, row: Result<CatalogGift, (String, String)>| match row {
        Ok(gift) => {
            out.gifts.push(gift);
            out.lines.push((file_arc.clone(), line));
        }
        Err((field, message)) => out.bad(file, line, &field, message),
    };
    match format {
        Format::JsonArray => {
            let mut reader = bytes;
            parse_array(&mut reader, &default_merchant, merchants, &mut |line, row| accept(&mut out, line, row))?;
        }
        Format::JsonLines => {
            let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
            for (i, raw) in text.lines().enumerate() {
                if raw.trim().is_empty() {
                    continue;
                }
                let row = row_of(raw, &default_merchant, merchants);
                accept(&mut out, i + 1, row);
            }
        }
        Format::GoogleMerchantTsv => {
            let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
            let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
            let Some((_, header)) = lines.next() else { return Ok(out) };
            let columns: Vec<String> = header.split('\t').map(|c| c.trim().to_ascii_lowercase()).collect();
            for required in ["id", "title", "price"] {
                if !columns.iter().any(|c| c == required) {
                    return Err(format!("the header row has no '{required}' column (a Google Merchant TSV feed)"));
                }
            }
            for (i, raw) in lines {
                let cells: HashMap<&str, &str> =
                    columns.iter().map(String::as_str).zip(raw.split('\t').map(str::trim)).collect();
                let row = merchant_feed_row(&cells).and_then(|row| row.into_gift(&default_merchant, merchants));
                accept(&mut out, i + 1, row);
            }
        }
    }
    Ok(out)
}

/// Bytes of a catalog file read at a time: a JSON array is parsed a window at a time, so a
/// million gifts (380 MB of JSON) never sit in memory beside their parsed rows (issue 28: the
/// whole file read first made the load's high-water mark 1.4 GiB).
const WINDOW: usize = 8 << 20;

/// Reads and parses one catalog file; a JSON array a window at a time, the other formats whole.
pub fn parse_file(path: &std::path::Path, merchants: &mut Merchants) -> Result<Parsed, String> {
    use std::io::Read;
    let name = path.display().to_string();
    let unreadable = |e: std::io::Error| format!("cannot read the catalog file {name}: {e}");
    let mut reader = std::fs::File::open(path).map_err(unreadable)?;
    let mut first = Vec::with_capacity(WINDOW);
    (&mut reader).take(WINDOW as u64).read_to_end(&mut first).map_err(unreadable)?;
    let full = first.len() < WINDOW;
    let format = Format::detect(&name, &first);
    if format == Format::JsonArray && (full || first.iter().any(|b| !b.is_ascii_whitespace())) {
        let mut out = Parsed::default();
        let file_arc: Arc<str> = Arc::from(name.as_str());
        let default_merchant = default_merchant_name(&name);
        let mut rest = std::io::Cursor::new(first).chain(reader);
        parse_array(&mut rest, &default_merchant, merchants, &mut |line, row| match row {
            Ok(gift) => {
                out.gifts.push(gift);
                out.lines.push((file_arc.clone(), line));
            }
            Err((field, message)) => out.bad(&name, line, &field, message),
        })
        .map_err(|e| format!("catalog file {name}: {e}"))?;
        return Ok(out);
    }
    reader.read_to_end(&mut first).map_err(unreadable)?;
    let format = Format::detect(&name, &first);
    parse(&name, &first, format, merchants).map_err(|e| format!("catalog file {name}: {e}"))
}

/// The part of a file not parsed yet, read a window at a time.
struct Window<'r, R> {
    reader: &'r mut R,
    buf: Vec<u8>,
    /// Where parsing is in `buf`.
    pos: usize,
    eof: bool,
    /// Lines before `buf[0]`, and the line count up to `counted` in `buf`.
    lines: usize,
    counted: usize,
}

impl<R: std::io::Read> Window<'_, R> {
    /// Reads more of the file, keeping `buf[pos..]`; false at its end.
    fn more(&mut self) -> Result<bool, String> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.line(); // counts the lines of what is dropped
            self.buf.drain(..self.pos);
            self.counted -= self.pos;
            self.pos = 0;
        }
        let len = self.buf.len();
        // A row longer than the window grows it.
        let room = WINDOW.max(len);
        self.buf.resize(len + room, 0);
        let mut filled = len;
        while filled < self.buf.len() {
            match self.reader.read(&mut self.buf[filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("cannot read it: {e}")),
            }
        }
        self.buf.truncate(filled);
        Ok(filled > len)
    }

    /// The line `pos` is on (1-based).
    fn line(&mut self) -> usize {
        self.lines += self.buf[self.counted..self.pos].iter().filter(|&&b| b == b'\n').count();
        self.counted = self.pos;
        self.lines + 1
    }

    /// Skips whitespace; the next byte, reading more when needed (`None` at the end).
    fn peek(&mut self) -> Result<Option<u8>, String> {
        loop {
            self.pos = skip_ws(&self.buf, self.pos);
            if let Some(&b) = self.buf.get(self.pos) {
                return Ok(Some(b));
            }
            if !self.more()? {
                return Ok(None);
            }
        }
    }
}

/// Parses `[ {gift}, … ]` from `reader`, calling `accept(line, row)` for every row in order.
/// `Err` is a problem with the file as a whole.
fn parse_array<R: std::io::Read>(
    reader: &mut R,
    default_merchant: &str,
    merchants: &mut Merchants,
    accept: &mut dyn FnMut(usize, Result<CatalogGift, FieldError>),
) -> Result<(), String> {
    let mut w = Window { reader, buf: Vec::new(), pos: 0, eof: false, lines: 0, counted: 0 };
    if w.peek()? != Some(b'[') {
        return Err("not a JSON array of gifts (the first character must be '[')".into());
    }
    w.pos += 1;
    if w.peek()? == Some(b']') {
        w.pos += 1;
    } else {
        loop {
            w.peek()?;
            let line = w.line();
            // Typed straight from the bytes (one pass); a row that does not fit the type is read
            // again as raw JSON to find its end and say which field is wrong. A row cut by the
            // end of the window is read again after more of the file.
            let (row, end) = loop {
                let mut typed = serde_json::Deserializer::from_slice(&w.buf[w.pos..]).into_iter::<Row>();
                match typed.next() {
                    Some(Ok(row)) => break (row.into_gift(default_merchant, merchants), w.pos + typed.byte_offset()),
                    Some(Err(e)) if e.is_eof() && w.more()? => continue,
                    _ => {}
                }
                let mut raw =
                    serde_json::Deserializer::from_slice(&w.buf[w.pos..]).into_iter::<&serde_json::value::RawValue>();
                let read = match raw.next() {
                    Some(Ok(value)) => {
                        Ok((row_of(value.get(), default_merchant, merchants), w.pos + raw.byte_offset()))
                    }
                    Some(Err(e)) => Err(Some(e)),
                    None => Err(None),
                };
                match read {
                    Ok(read) => break read,
                    Err(Some(e)) if e.is_eof() && w.more()? => continue,
                    Err(Some(e)) => return Err(format!("line {}: not valid JSON: {}", line + e.line() - 1, e)),
                    Err(None) => return Err(format!("line {line}: the array is not closed")),
                }
            };
            accept(line, row);
            w.pos = end;
            match w.peek()? {
                Some(b',') => w.pos += 1,
                Some(b']') => {
                    w.pos += 1;
                    break;
                }
                _ => return Err(format!("line {}: expected ',' or ']' after a gift", w.line())),
            }
        }
    }
    if w.peek()?.is_some() {
        return Err("text after the end of the array".into());
    }
    Ok(())
}

/// One JSON gift object: typed straight away when it is well formed (a million rows load in
/// seconds), through a `Value` only to say which field is wrong when it is not.
fn row_of(raw: &str, default_merchant: &str, merchants: &mut Merchants) -> Result<CatalogGift, FieldError> {
    let row = match serde_json::from_str::<Row>(raw) {
        Ok(row) => row,
        Err(_) => match serde_json::from_str::<serde_json::Value>(raw) {
            Ok(value) => Row::from_value(value)?,
            Err(e) => return Err(field_error("(row)", format!("not a JSON object: {e}"))),
        },
    };
    row.into_gift(default_merchant, merchants)
}

/// The merchant of rows that name none: the file's name without its extension.
fn default_merchant_name(file: &str) -> String {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = name.split('.').next().unwrap_or(name);
    if stem.is_empty() { "Catalog".into() } else { stem.to_string() }
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(u8::is_ascii_whitespace) {
        pos += 1;
    }
    pos
}

/// One gift as a file gives it, before checks and defaults.
#[derive(Debug, Default, Deserialize)]
struct Row {
    id: Option<String>,
    title: Option<String>,
    description: Option<String>,
    price_minor: Option<i64>,
    currency: Option<String>,
    merchant: Option<String>,
    merchant_id: Option<String>,
    tags: Option<Vec<String>>,
    age_min: Option<i64>,
    age_max: Option<i64>,
    relationships: Option<Vec<String>>,
    occasions: Option<Vec<String>>,
    stock: Option<i64>,
    image: Option<String>,
}

/// What each field must be, for the message when a value has the wrong JSON type.
const FIELD_TYPES: &[(&str, &str)] = &[
    ("id", "a string"),
    ("title", "a string"),
    ("description", "a string"),
    ("price_minor", "a whole number of cents"),
    ("currency", "a string"),
    ("merchant", "a string"),
    ("merchant_id", "a string"),
    ("tags", "a list of strings"),
    ("age_min", "a whole number"),
    ("age_max", "a whole number"),
    ("relationships", "a list of strings"),
    ("occasions", "a list of strings"),
    ("stock", "a whole number"),
    ("image", "a string"),
];

type FieldError = (String, String);

fn field_error(field: &str, message: impl Into<String>) -> FieldError {
    (field.to_string(), message.into())
}

impl Row {
    fn from_value(value: serde_json::Value) -> Result<Row, FieldError> {
        let serde_json::Value::Object(object) = value else {
            return Err(field_error("(row)", "is not a JSON object"));
        };
        // Find the field with the wrong type by trying each on its own: serde's message names a
        // type and a column, not the field.
        match serde_json::from_value::<Row>(serde_json::Value::Object(object.clone())) {
            Ok(row) => Ok(row),
            Err(e) => {
                // Reached only for a row that failed the typed parse.
                for (field, expected) in FIELD_TYPES {
                    if let Some(v) = object.get(*field) {
                        let mut single = serde_json::Map::new();
                        single.insert((*field).to_string(), v.clone());
                        if serde_json::from_value::<Row>(serde_json::Value::Object(single)).is_err() {
                            return Err(field_error(field, format!("must be {expected}")));
                        }
                    }
                }
                Err(field_error("(row)", e.to_string()))
            }
        }
    }

    /// Checks every field and fills the documented defaults.
    fn into_gift(self, default_merchant: &str, merchants: &mut Merchants) -> Result<CatalogGift, FieldError> {
        let id = self.id.ok_or_else(|| field_error("id", "is required"))?;
        if !super::plain_id(&id) {
            return Err(field_error("id", "must be 1-64 letters, digits, '-' or '_'"));
        }
        let title = self.title.map(trimmed).unwrap_or_default();
        if title.is_empty() {
            return Err(field_error("title", "is required"));
        }
        if title.chars().count() > MAX_TITLE {
            return Err(field_error("title", format!("is longer than {MAX_TITLE} characters")));
        }
        let description = self.description.map(trimmed).unwrap_or_default();
        if description.chars().count() > MAX_DESCRIPTION {
            return Err(field_error("description", format!("is longer than {MAX_DESCRIPTION} characters")));
        }
        let price_cents = self.price_minor.ok_or_else(|| field_error("price_minor", "is required"))?;
        if !(1..=100_000_000).contains(&price_cents) {
            return Err(field_error("price_minor", "must be between 1 and 100000000 cents"));
        }
        if let Some(currency) = self.currency
            && currency != "USD"
        {
            return Err(field_error(
                "currency",
                format!("must be USD (catalog prices are in US cents; got {})", clip(&currency)),
            ));
        }
        let merchant_name = self.merchant.as_deref().map(str::trim).filter(|m| !m.is_empty());
        let merchant_name = merchant_name.unwrap_or(default_merchant);
        let merchant_id = match self.merchant_id {
            Some(id) if super::plain_id(&id) => Some(id),
            Some(_) => return Err(field_error("merchant_id", "must be 1-64 letters, digits, '-' or '_'")),
            None => None,
        };
        let tags = self.tags.unwrap_or_default();
        if tags.len() > MAX_TAGS {
            return Err(field_error("tags", format!("has more than {MAX_TAGS} tags")));
        }
        let mut clean_tags: Vec<&str> = Vec::with_capacity(tags.len());
        for tag in &tags {
            let tag = tag.trim();
            if tag.is_empty() || tag.chars().count() > MAX_TAG {
                return Err(field_error("tags", format!("each tag must be 1-{MAX_TAG} characters")));
            }
            if !clean_tags.contains(&tag) {
                clean_tags.push(tag);
            }
        }
        let age_min = self.age_min.unwrap_or(0);
        let age_max = self.age_max.unwrap_or(MAX_AGE);
        for (field, age) in [("age_min", age_min), ("age_max", age_max)] {
            if !(0..=MAX_AGE).contains(&age) {
                return Err(field_error(field, format!("must be between 0 and {MAX_AGE}")));
            }
        }
        if age_min > age_max {
            return Err(field_error("age_min", format!("({age_min}) is greater than age_max ({age_max})")));
        }
        let relationships = match self.relationships {
            None => Set::all(),
            Some(names) => {
                let mut out = Set::EMPTY;
                for name in names {
                    let r = RelationshipType::ALL.into_iter().find(|r| r.as_str() == name).ok_or_else(|| {
                        field_error("relationships", format!("{} is not a relationship we know", clip(&name)))
                    })?;
                    out.insert(r);
                }
                out
            }
        };
        let (occasions, first_occasion) = match self.occasions {
            None => (Set::EMPTY, None),
            Some(names) => {
                let mut out = Set::EMPTY;
                let mut first = None;
                for name in names {
                    let o = Occasion::ALL.into_iter().find(|o| o.as_str() == name).ok_or_else(|| {
                        field_error("occasions", format!("{} is not an occasion we know", clip(&name)))
                    })?;
                    out.insert(o);
                    first = first.or(Some(o));
                }
                (out, first)
            }
        };
        let stock = match self.stock {
            None => DEFAULT_STOCK,
            Some(n) => u32::try_from(n).map_err(|_| field_error("stock", "must be between 0 and 4294967295"))?,
        };
        let image = match self.image.map(|i| i.trim().to_string()).filter(|i| !i.is_empty()) {
            None => None,
            Some(url) => match url::Url::parse(&url) {
                // http too: the server fetches the photo itself (`photos/`), the buyer's browser never does.
                Ok(u) if matches!(u.scheme(), "https" | "http") && u.has_host() && url.len() <= 2048 => {
                    Some(url.into_boxed_str())
                }
                _ => return Err(field_error("image", "must be an http:// or https:// URL of at most 2048 characters")),
            },
        };
        Ok(CatalogGift {
            id: id.into_boxed_str(),
            title: title.into_boxed_str(),
            description: description.into_boxed_str(),
            price_cents,
            tags: merchants.tags(&clean_tags),
            age_min: age_min as u8,
            age_max: age_max as u8,
            relationships,
            occasions,
            first_occasion,
            stock,
            merchant: merchants.get(merchant_id, merchant_name),
            image,
        })
    }
}

/// `text` without surrounding whitespace, reusing its allocation when there is none.
fn trimmed(text: String) -> String {
    if text.trim().len() == text.len() { text } else { text.trim().to_string() }
}

/// At most 40 characters of a bad value, for a row error.
fn clip(value: &str) -> String {
    let mut out: String = value.chars().take(40).collect();
    if out.len() < value.len() {
        out.push('…');
    }
    format!("{out:?}")
}

/// A merchant id from a name: lower-case letters and digits, other runs become one '-'.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    let out: String = out.chars().take(64).collect();
    if out.is_empty() { "merchant".into() } else { out.trim_end_matches('-').to_string() }
}

/// A tag from a feed's category or label: lower case, words joined by '-'.
fn tag_of(text: &str) -> Option<String> {
    let tag = slug(text);
    (tag != "merchant" && !tag.is_empty()).then(|| tag.chars().take(MAX_TAG).collect())
}

/// A Google Merchant Center TSV row as a catalog row (the mapping is in `docs/catalog.md`).
fn merchant_feed_row(cells: &HashMap<&str, &str>) -> Result<Row, FieldError> {
    let cell = |name: &str| cells.get(name).copied().filter(|v| !v.is_empty());
    let price = cell("price").ok_or_else(|| field_error("price", "is required"))?;
    let (price_minor, currency) = merchant_price(price)
        .ok_or_else(|| field_error("price", "must be an amount and a currency, like \"15.00 USD\""))?;
    let stock = match cell("availability").map(|a| a.to_ascii_lowercase().replace(' ', "_")) {
        None => None,
        Some(a) if a == "out_of_stock" => Some(0),
        Some(a) if matches!(a.as_str(), "in_stock" | "preorder" | "backorder") => None,
        Some(_) => return Err(field_error("availability", "must be in_stock, out_of_stock, preorder or backorder")),
    };
    let (age_min, age_max) = match cell("age_group").map(str::to_ascii_lowercase).as_deref() {
        None => (None, None),
        Some("newborn") | Some("infant") => (Some(0), Some(1)),
        Some("toddler") => (Some(1), Some(5)),
        Some("kids") => (Some(5), Some(13)),
        Some("adult") => (Some(13), Some(MAX_AGE)),
        Some(_) => return Err(field_error("age_group", "must be newborn, infant, toddler, kids or adult")),
    };
    let mut tags: Vec<String> = Vec::new();
    if let Some(path) = cell("product_type") {
        // The deepest level first: a catalog's first tag says what the gift is (`fit::KIND`).
        tags.extend(path.split('>').rev().filter_map(tag_of));
    }
    for label in ["custom_label_0", "custom_label_1", "custom_label_2", "custom_label_3", "custom_label_4"] {
        if let Some(value) = cell(label) {
            tags.extend(value.split(',').filter_map(tag_of));
        }
    }
    tags.truncate(MAX_TAGS);
    Ok(Row {
        id: cell("id").map(str::to_string),
        title: cell("title").map(str::to_string),
        description: cell("description").map(str::to_string),
        price_minor: Some(price_minor),
        currency: Some(currency),
        merchant: cell("brand").map(str::to_string),
        merchant_id: None,
        tags: Some(tags),
        age_min,
        age_max,
        relationships: None,
        occasions: None,
        stock,
        image: cell("image_link").map(str::to_string),
    })
}

/// "15.00 USD" (or "USD 15.00") as cents and the currency code.
fn merchant_price(text: &str) -> Option<(i64, String)> {
    let mut parts = text.split_whitespace();
    let (a, b) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (amount, currency) = if a.chars().all(|c| c.is_ascii_uppercase()) { (b, a) } else { (a, b) };
    if currency.len() != 3 || !currency.chars().all(|c| c.is_ascii_uppercase()) {
        return None;
    }
    let (whole, frac) = amount.split_once('.').unwrap_or((amount, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || whole.len() > 9 {
        return None;
    }
    if frac.len() > 2 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let cents = whole.parse::<i64>().ok()? * 100 + format!("{frac:0<2}").parse::<i64>().ok()?;
    Some((cents, currency.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(name: &str, text: &str) -> Result<Parsed, String> {
        parse(name, text.as_bytes(), Format::detect(name, text.as_bytes()), &mut Merchants::default())
    }

    const BENCH_ROW: &str = r#"{"id":"gift-000001","title":"Cozy Walnut Chef's Knife","description":"A knife.","price_minor":3550,"currency":"USD","merchant":"Maple & Moss","tags":["cooking","kitchen"],"age_min":14,"age_max":99,"relationships":["partner","parent"]}"#;

    #[test]
    fn the_bench_format_loads_with_documented_defaults() {
        let parsed = parse_str("bench.json", &format!("[{BENCH_ROW}]")).unwrap();
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        let gift = &parsed.gifts[0];
        assert_eq!(gift.price_cents, 3550);
        assert_eq!(gift.stock, DEFAULT_STOCK);
        assert!(gift.occasions.is_empty());
        assert_eq!(gift.merchant.id, "maple-moss");
        assert_eq!(gift.merchant.name, "Maple & Moss");
        assert_eq!(gift.image, None);
        assert_eq!(
            gift.relationships.iter().collect::<Vec<_>>(),
            [RelationshipType::Partner, RelationshipType::Parent]
        );
    }

    #[test]
    fn a_photo_url_is_http_or_https_and_anything_else_is_a_bad_row() {
        let row = |image: &str| format!(r#"{{"id":"p","title":"Photo","price_minor":5,"image":{image:?}}}"#);
        for good in ["https://cdn.example/p.jpg", "http://shop.example/p.png"] {
            let parsed = parse_str("shop.jsonl", &row(good)).unwrap();
            assert_eq!(parsed.gifts[0].image.as_deref(), Some(good));
        }
        for bad in [
            "ftp://cdn.example/p.jpg",
            "javascript:alert(1)",
            "data:image/png;base64,AAAA",
            "/p.jpg",
            "file:///etc/passwd",
        ] {
            let parsed = parse_str("shop.jsonl", &format!("{}\n{BENCH_ROW}", row(bad))).unwrap();
            assert_eq!(parsed.errors.len(), 1, "{bad}");
            assert_eq!(parsed.errors[0].field, "image", "{bad}");
        }
    }

    #[test]
    fn json_lines_and_a_json_array_give_the_same_gifts() {
        let array = parse_str("a.json", &format!("[\n{BENCH_ROW}\n]")).unwrap();
        let lines = parse_str("a.jsonl", &format!("{BENCH_ROW}\n\n")).unwrap();
        assert_eq!(array.gifts.len(), 1);
        assert_eq!(format!("{:?}", array.gifts), format!("{:?}", lines.gifts));
    }

    #[test]
    fn bad_rows_name_their_file_line_and_field_and_the_good_ones_load() {
        let text = [
            "[",
            BENCH_ROW,
            r#",{"id":"b","title":"No price"}"#,
            r#",{"id":"c","title":"Wrong type","price_minor":"12"}"#,
            r#",{"id":"d e","title":"Bad id","price_minor":5}"#,
            r#",{"id":"f","title":"Old","price_minor":5,"age_min":30,"age_max":20}"#,
            r#",{"id":"g","title":"Who","price_minor":5,"relationships":["pal"]}"#,
            r#",{"id":"h","title":"Euro","price_minor":5,"currency":"EUR"}"#,
            r#",{"id":"gift-000001","title":"Twin","price_minor":5}"#,
            "]",
        ]
        .join("\n");
        let mut parsed = parse_str("shop.json", &text).unwrap();
        let errors: Vec<(usize, &str)> = parsed.errors.iter().map(|e| (e.line, e.field.as_str())).collect();
        assert_eq!(
            errors,
            [(3, "price_minor"), (4, "price_minor"), (5, "id"), (6, "age_min"), (7, "relationships"), (8, "currency")]
        );
        assert_eq!(parsed.errors[1].message, "must be a whole number of cents");
        assert_eq!(parsed.errors[0].to_string(), "shop.json:3: price_minor: is required");
        // The duplicate id is caught when files (or rows) are combined.
        let mut all = Parsed::default();
        let twin = parsed.gifts.pop().unwrap();
        all.extend(parsed);
        let mut second = Parsed::default();
        second.gifts.push(twin);
        second.lines.push((Arc::from("shop.json"), 9));
        all.extend(second);
        assert_eq!(all.gifts.len(), 1);
        assert_eq!(
            all.errors.last().unwrap().to_string(),
            "shop.json:9: id: id gift-000001 is already used at shop.json:2"
        );
    }

    #[test]
    fn a_file_that_is_not_a_catalog_is_an_error_of_the_file() {
        assert!(parse_str("x.json", "{\"merchant\": 1").is_err());
        assert!(parse_str("x.json", "[{\"id\":\"a\"}").unwrap_err().contains("line 1"));
        assert!(parse_str("x.tsv", "sku\tname\n1\tx").unwrap_err().contains("'id'"));
    }

    #[test]
    fn a_google_merchant_feed_maps_to_catalog_gifts() {
        let feed = "id\ttitle\tdescription\tprice\tavailability\tbrand\tproduct_type\tcustom_label_0\tage_group\timage_link\n\
                    sku-1\tTrail Mug\tEnamel mug.\t15.00 USD\tin stock\tCamp Co\tHome & Garden > Camping Gear\tcoffee, hiking\tadult\thttps://cdn.example/m.png\n\
                    sku-2\tSold Out\t\t9.5 USD\tout_of_stock\t\t\t\t\t\n\
                    sku-3\tPriceless\t\tfree\tin_stock\t\t\t\t\t\n";
        let parsed = parse_str("feed.tsv", feed).unwrap();
        assert_eq!(parsed.errors.len(), 1);
        assert_eq!((parsed.errors[0].line, parsed.errors[0].field.as_str()), (4, "price"));
        let mug = &parsed.gifts[0];
        assert_eq!((mug.price_cents, mug.stock, mug.age_min, mug.age_max), (1500, DEFAULT_STOCK, 13, 120));
        assert_eq!(
            mug.tags.iter().map(|t| &**t).collect::<Vec<_>>(),
            ["camping-gear", "home-garden", "coffee", "hiking"]
        );
        assert_eq!((mug.merchant.id.as_str(), mug.merchant.name.as_str()), ("camp-co", "Camp Co"));
        assert_eq!(mug.image.as_deref(), Some("https://cdn.example/m.png"));
        let sold_out = &parsed.gifts[1];
        assert_eq!((sold_out.price_cents, sold_out.stock), (950, 0));
        assert_eq!(sold_out.merchant.name, "feed", "no brand: the file's name");
    }

    #[test]
    fn merchant_prices_parse_exactly() {
        assert_eq!(merchant_price("15.00 USD"), Some((1500, "USD".into())));
        assert_eq!(merchant_price("USD 7"), Some((700, "USD".into())));
        assert_eq!(merchant_price("0.5 USD"), Some((50, "USD".into())));
        assert_eq!(merchant_price("1.005 USD"), None);
        assert_eq!(merchant_price("-3 USD"), None);
        assert_eq!(merchant_price("3 dollars"), None);
    }
}
