//! When a gift arrives: the earliest and latest delivery dates of a shipping option, from the
//! merchant's handling (time zone, cut-off hour, handling days, business days, holidays) and the
//! carrier's transit to the destination country (business days per option, the destination's
//! own weekends and holidays). Issue 42 item 3; `docs/delivery.md` has the rules and the tables.
//!
//! Two calendars, because two places work on the parcel: the merchant packs it on the
//! merchant's business days, in the merchant's time zone (an order placed after the cut-off, or
//! on a weekend or holiday, is handled from the next business day); the carrier then takes it
//! to the destination on the destination's business days. The hand-over is one instant (the
//! ship day's cut-off hour at the merchant), read in the destination's time zone: across the
//! date line that is already the next day there. Every date answered is the recipient's.
//!
//! Pure: the caller passes "now" (its injected clock), so every rule is tested at a fixed
//! instant (late on a Friday, across the date line, over a holiday).

use giftgenius_types::{DeliveryOption, Money, ShippingSpeed};
use jiff::civil::{Date, Weekday, date};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

/// How a merchant handles an order before the carrier has it.
#[derive(Debug, Clone)]
pub struct Handling {
    /// IANA time zone the merchant works in ("America/New_York").
    pub time_zone: &'static str,
    /// Orders placed before this hour (merchant's time, 0–23) are handled that business day.
    pub cutoff_hour: i8,
    /// Business days between the day an order is handled and the day it ships: 0 ships the
    /// same day, 1 the next business day.
    pub handling_days: u8,
    /// Days the merchant does not work besides Saturdays and Sundays.
    pub holidays: &'static [Date],
}

/// US federal holidays in 2026 and 2027, on the weekday they are observed (the carriers' too).
const US_HOLIDAYS: &[Date] = &[
    date(2026, 1, 1),
    date(2026, 1, 19),
    date(2026, 2, 16),
    date(2026, 5, 25),
    date(2026, 6, 19),
    date(2026, 7, 3),
    date(2026, 9, 7),
    date(2026, 10, 12),
    date(2026, 11, 11),
    date(2026, 11, 26),
    date(2026, 12, 25),
    date(2027, 1, 1),
    date(2027, 1, 18),
    date(2027, 2, 15),
    date(2027, 5, 31),
    date(2027, 6, 18),
    date(2027, 7, 5),
    date(2027, 9, 6),
    date(2027, 10, 11),
    date(2027, 11, 11),
    date(2027, 11, 25),
    date(2027, 12, 24),
    date(2027, 12, 31),
];

/// Every built-in merchant ships from the United States; a merchant not listed is handled by
/// [`DEFAULT_HANDLING`].
const HANDLING: &[(&str, Handling)] = &[
    (
        "hearth-home",
        Handling { time_zone: "America/New_York", cutoff_hour: 14, handling_days: 1, holidays: US_HOLIDAYS },
    ),
    ("trailhead", Handling { time_zone: "America/Denver", cutoff_hour: 12, handling_days: 1, holidays: US_HOLIDAYS }),
    (
        "page-and-pixel",
        Handling { time_zone: "America/Los_Angeles", cutoff_hour: 15, handling_days: 0, holidays: US_HOLIDAYS },
    ),
    (
        "little-wonders",
        Handling { time_zone: "America/Chicago", cutoff_hour: 13, handling_days: 2, holidays: US_HOLIDAYS },
    ),
];

/// A merchant nobody described: ships from New York the next business day.
pub const DEFAULT_HANDLING: Handling =
    Handling { time_zone: "America/New_York", cutoff_hour: 14, handling_days: 1, holidays: US_HOLIDAYS };

/// How `merchant_id` handles its orders.
pub fn handling_of(merchant_id: &str) -> &'static Handling {
    HANDLING.iter().find(|(id, _)| *id == merchant_id).map_or(&DEFAULT_HANDLING, |(_, h)| h)
}

/// The carrier's side for one destination country.
#[derive(Debug, Clone, Copy)]
pub struct Transit {
    /// The time zone whose calendar the delivery days are counted in.
    pub time_zone: &'static str,
    /// Business days in transit, fewest and most, per option.
    pub standard: (u8, u8),
    pub express: (u8, u8),
    /// Days carriers do not deliver there besides Saturdays and Sundays.
    pub holidays: &'static [Date],
}

const GB_HOLIDAYS: &[Date] = &[date(2026, 12, 25), date(2026, 12, 28), date(2027, 1, 1)];
const NZ_HOLIDAYS: &[Date] = &[date(2026, 12, 25), date(2026, 12, 28), date(2027, 1, 1), date(2027, 1, 4)];
const EU_HOLIDAYS: &[Date] = &[date(2026, 12, 25), date(2027, 1, 1)];

/// Transit per destination country (ISO 3166-1 alpha-2); any other country is
/// [`OTHER_COUNTRIES`].
const TRANSIT: &[(&str, Transit)] = &[
    ("US", Transit { time_zone: "America/Chicago", standard: (3, 5), express: (1, 2), holidays: US_HOLIDAYS }),
    ("CA", Transit { time_zone: "America/Toronto", standard: (5, 8), express: (2, 4), holidays: EU_HOLIDAYS }),
    ("MX", Transit { time_zone: "America/Mexico_City", standard: (6, 10), express: (3, 5), holidays: EU_HOLIDAYS }),
    ("GB", Transit { time_zone: "Europe/London", standard: (6, 10), express: (3, 5), holidays: GB_HOLIDAYS }),
    ("ES", Transit { time_zone: "Europe/Madrid", standard: (7, 12), express: (3, 5), holidays: EU_HOLIDAYS }),
    ("PT", Transit { time_zone: "Europe/Lisbon", standard: (7, 12), express: (3, 5), holidays: EU_HOLIDAYS }),
    ("FR", Transit { time_zone: "Europe/Paris", standard: (7, 12), express: (3, 5), holidays: EU_HOLIDAYS }),
    ("DE", Transit { time_zone: "Europe/Berlin", standard: (7, 12), express: (3, 5), holidays: EU_HOLIDAYS }),
    ("BR", Transit { time_zone: "America/Sao_Paulo", standard: (10, 18), express: (4, 7), holidays: EU_HOLIDAYS }),
    ("JP", Transit { time_zone: "Asia/Tokyo", standard: (8, 14), express: (3, 5), holidays: EU_HOLIDAYS }),
    ("AU", Transit { time_zone: "Australia/Sydney", standard: (8, 14), express: (4, 6), holidays: EU_HOLIDAYS }),
    ("NZ", Transit { time_zone: "Pacific/Auckland", standard: (8, 14), express: (4, 6), holidays: NZ_HOLIDAYS }),
];

/// Anywhere else: the slowest table row, counted in UTC.
pub const OTHER_COUNTRIES: Transit = Transit { time_zone: "UTC", standard: (10, 20), express: (5, 8), holidays: &[] };

/// The transit to `country` (any case).
pub fn transit_to(country: &str) -> &'static Transit {
    TRANSIT.iter().find(|(c, _)| c.eq_ignore_ascii_case(country)).map_or(&OTHER_COUNTRIES, |(_, t)| t)
}

/// The first and last day a shipment may arrive, in the recipient's calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub earliest: Date,
    pub latest: Date,
}

impl Window {
    /// Whether it surely arrives by `needed_by` (its latest day is on or before it).
    pub fn makes(&self, needed_by: Date) -> bool {
        self.latest <= needed_by
    }
}

/// Why a window could not be computed: a time zone name missing from the bundled database, or a
/// date outside what the calendar counts (neither happens with the tables above).
#[derive(Debug, thiserror::Error)]
#[error("delivery dates: {0}")]
pub struct ArrivalError(String);

impl From<jiff::Error> for ArrivalError {
    fn from(e: jiff::Error) -> Self {
        ArrivalError(e.to_string())
    }
}

/// When a gift ordered at `now_ms` (Unix milliseconds) from a merchant that handles orders as
/// `handling` arrives in `country` by `speed`.
pub fn window(
    handling: &Handling,
    transit: &Transit,
    speed: ShippingSpeed,
    now_ms: i64,
) -> Result<Window, ArrivalError> {
    let merchant = TimeZone::get(handling.time_zone)?;
    let now = Timestamp::from_millisecond(now_ms)?.to_zoned_datetime(merchant.clone());
    // The first business day the merchant handles the order on.
    let mut handled = now.date();
    if now.hour() >= handling.cutoff_hour || !working(handled, handling.holidays) {
        handled = next_working(handled, handling.holidays)?;
    }
    let ships = add_working(handled, handling.handling_days, handling.holidays)?;
    // Handed over at the cut-off hour of the ship day, read in the destination's calendar.
    let handover: ZonedDateTime = ships.at(handling.cutoff_hour, 0, 0, 0).to_zoned_datetime(merchant)?;
    let there = handover.with_time_zone(TimeZone::get(transit.time_zone)?).date();
    let (fewest, most) = match speed {
        ShippingSpeed::Standard => transit.standard,
        ShippingSpeed::Express => transit.express,
    };
    Ok(Window {
        earliest: add_working(there, fewest, transit.holidays)?,
        latest: add_working(there, most, transit.holidays)?,
    })
}

/// When a parcel with gifts of every merchant of `merchant_ids` arrives by `speed`: each
/// merchant's gifts travel as its own handling allows, and the parcel is there when the slowest
/// part is (the latest earliest day and the latest last day). One merchant: its own window.
fn window_of_all(
    merchant_ids: &[&str],
    transit: &Transit,
    speed: ShippingSpeed,
    now_ms: i64,
) -> Result<Window, ArrivalError> {
    let mut all: Option<Window> = None;
    for merchant_id in merchant_ids {
        let w = window(handling_of(merchant_id), transit, speed, now_ms)?;
        all = Some(match all {
            None => w,
            Some(a) => Window { earliest: a.earliest.max(w.earliest), latest: a.latest.max(w.latest) },
        });
    }
    // No merchant named: a merchant nobody described.
    match all {
        Some(w) => Ok(w),
        None => window(&DEFAULT_HANDLING, transit, speed, now_ms),
    }
}

/// The window of every option for a parcel of `merchant_ids`' gifts, fastest last (the order
/// the contract lists them in).
pub fn windows(
    merchant_ids: &[&str],
    country: &str,
    now_ms: i64,
) -> Result<Vec<(ShippingSpeed, Window)>, ArrivalError> {
    let transit = transit_to(country);
    [ShippingSpeed::Standard, ShippingSpeed::Express]
        .into_iter()
        .map(|speed| Ok((speed, window_of_all(merchant_ids, transit, speed, now_ms)?)))
        .collect()
}

/// The contract's `delivery_options` of a draft: every option with its `cost`, its dates
/// (`YYYY-MM-DD`) and, with `needed_by` (a `YYYY-MM-DD` the caller validated), whether it
/// surely arrives by then.
pub fn delivery_options(
    merchant_ids: &[&str],
    country: &str,
    needed_by: Option<&str>,
    now_ms: i64,
    cost: impl Fn(ShippingSpeed) -> Money,
) -> Result<Vec<DeliveryOption>, ArrivalError> {
    let needed_by: Option<Date> = needed_by.map(str::parse).transpose()?;
    Ok(windows(merchant_ids, country, now_ms)?
        .into_iter()
        .map(|(shipping, w)| DeliveryOption {
            shipping,
            cost: cost(shipping),
            earliest: w.earliest.to_string(),
            latest: w.latest.to_string(),
            in_time: needed_by.map(|day| w.makes(day)),
        })
        .collect())
}

/// A window as the instants ACP's fulfilment options carry (`earliest_delivery_time`,
/// `latest_delivery_time`, RFC 3339 in UTC): the start of its first day and the end of its last,
/// in the destination's time zone.
pub fn bounds(window: &Window, country: &str) -> Result<(String, String), ArrivalError> {
    let zone = TimeZone::get(transit_to(country).time_zone)?;
    let start = window.earliest.at(0, 0, 0, 0).to_zoned_datetime(zone.clone())?.timestamp();
    let end = window.latest.at(23, 59, 59, 0).to_zoned_datetime(zone)?.timestamp();
    Ok((start.to_string(), end.to_string()))
}

/// The window an order placed at `now_ms` is promised, as the days (`YYYY-MM-DD`, the
/// recipient's calendar) the order keeps: what the person was shown when they paid.
pub fn promised(
    merchant_ids: &[&str],
    country: &str,
    speed: ShippingSpeed,
    now_ms: i64,
) -> Result<(String, String), ArrivalError> {
    let w = window_of_all(merchant_ids, transit_to(country), speed, now_ms)?;
    Ok((w.earliest.to_string(), w.latest.to_string()))
}

/// [`bounds`] of a window kept as its days (`YYYY-MM-DD`): ACP's `estimated_delivery`.
pub fn bounds_of_days(earliest: &str, latest: &str, country: &str) -> Result<(String, String), ArrivalError> {
    bounds(&Window { earliest: earliest.parse()?, latest: latest.parse()? }, country)
}

fn working(day: Date, holidays: &[Date]) -> bool {
    !matches!(day.weekday(), Weekday::Saturday | Weekday::Sunday) && !holidays.contains(&day)
}

fn next_working(mut day: Date, holidays: &[Date]) -> Result<Date, ArrivalError> {
    loop {
        day = day.tomorrow()?;
        if working(day, holidays) {
            return Ok(day);
        }
    }
}

/// `days` business days after `day` (0: `day` itself, moved to a business day if it is none).
fn add_working(day: Date, days: u8, holidays: &[Date]) -> Result<Date, ArrivalError> {
    let mut at = if working(day, holidays) { day } else { next_working(day, holidays)? };
    for _ in 0..days {
        at = next_working(at, holidays)?;
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use giftgenius_types::Currency;

    use super::*;

    /// Unix milliseconds of a wall-clock time in `zone`.
    fn at(zone: &str, y: i16, m: i8, d: i8, h: i8, min: i8) -> i64 {
        date(y, m, d)
            .at(h, min, 0, 0)
            .to_zoned_datetime(TimeZone::get(zone).unwrap())
            .unwrap()
            .timestamp()
            .as_millisecond()
    }

    fn new_york(cutoff_hour: i8, handling_days: u8) -> Handling {
        Handling { time_zone: "America/New_York", cutoff_hour, handling_days, holidays: US_HOLIDAYS }
    }

    fn us() -> &'static Transit {
        transit_to("us")
    }

    #[test]
    fn before_the_cut_off_on_a_weekday_it_is_handled_that_day() {
        // Tuesday 2026-12-08, 10:00 in New York, cut-off 14:00, ships the same day (0 handling
        // days), US standard 3–5 business days: Fri 11 – Tue 15.
        let w = window(&new_york(14, 0), us(), ShippingSpeed::Standard, at("America/New_York", 2026, 12, 8, 10, 0))
            .unwrap();
        assert_eq!(w, Window { earliest: date(2026, 12, 11), latest: date(2026, 12, 15) });
        // One handling day: ships Wednesday 9th, arrives Mon 14 – Wed 16.
        let w = window(&new_york(14, 1), us(), ShippingSpeed::Standard, at("America/New_York", 2026, 12, 8, 10, 0))
            .unwrap();
        assert_eq!(w, Window { earliest: date(2026, 12, 14), latest: date(2026, 12, 16) });
    }

    /// Late on a Friday in the merchant's time zone (already Saturday in UTC): handled on Monday.
    #[test]
    fn late_on_a_friday_it_waits_for_monday() {
        let friday_evening = at("America/New_York", 2026, 12, 11, 21, 30);
        let w = window(&new_york(14, 0), us(), ShippingSpeed::Express, friday_evening).unwrap();
        // Ships Monday 14th; express 1–2 business days: Tue 15 – Wed 16.
        assert_eq!(w, Window { earliest: date(2026, 12, 15), latest: date(2026, 12, 16) });
        // The same instant is 18:30 in Los Angeles, after a 15:00 cut-off there too: Monday.
        let west = Handling { time_zone: "America/Los_Angeles", ..new_york(15, 0) };
        assert_eq!(window(&west, us(), ShippingSpeed::Express, friday_evening).unwrap(), w);
        // A cut-off at 22:00 makes Friday count: ships Friday, express Mon 14 – Tue 15.
        let late = window(&new_york(22, 0), us(), ShippingSpeed::Express, friday_evening).unwrap();
        assert_eq!(late, Window { earliest: date(2026, 12, 14), latest: date(2026, 12, 15) });
    }

    /// Christmas Day is no business day on either side: a US order shipped on the 24th arrives
    /// one day later than the weekdays alone say.
    #[test]
    fn a_holiday_in_the_table_is_skipped() {
        let christmas_eve = at("America/New_York", 2026, 12, 24, 9, 0);
        let w = window(&new_york(14, 0), us(), ShippingSpeed::Express, christmas_eve).unwrap();
        // Ships Thu 24; express 1–2 business days skips Fri 25 (holiday) and the weekend.
        assert_eq!(w, Window { earliest: date(2026, 12, 28), latest: date(2026, 12, 29) });
        // An order placed on the holiday itself is handled the next business day, Monday 28th.
        let christmas = at("America/New_York", 2026, 12, 25, 9, 0);
        let w = window(&new_york(14, 0), us(), ShippingSpeed::Express, christmas).unwrap();
        assert_eq!(w, Window { earliest: date(2026, 12, 29), latest: date(2026, 12, 30) });
    }

    /// Across the date line: handed over on Monday 16:00 in Los Angeles, it is already Tuesday
    /// in Auckland, and the transit days are Auckland's.
    #[test]
    fn across_the_date_line_the_days_are_the_recipients() {
        let west = Handling { time_zone: "America/Los_Angeles", cutoff_hour: 16, handling_days: 0, holidays: &[] };
        let monday_morning = at("America/Los_Angeles", 2026, 11, 30, 9, 0);
        let nz = transit_to("NZ");
        let w = window(&west, nz, ShippingSpeed::Express, monday_morning).unwrap();
        // Hand-over: Mon 30 Nov 16:00 PST = Tue 1 Dec 13:00 NZDT; express 4–6 business days
        // from Tuesday: Mon 7 – Wed 9 Dec.
        assert_eq!(w, Window { earliest: date(2026, 12, 7), latest: date(2026, 12, 9) });
        // Counted in the merchant's calendar it would have been Fri 4 – Tue 8: a day early.
        let same_zone = Transit { time_zone: "America/Los_Angeles", ..*nz };
        let naive = window(&west, &same_zone, ShippingSpeed::Express, monday_morning).unwrap();
        assert_eq!(naive, Window { earliest: date(2026, 12, 4), latest: date(2026, 12, 8) });
    }

    #[test]
    fn needed_by_is_met_only_by_a_latest_day_on_or_before_it() {
        let w = Window { earliest: date(2026, 12, 15), latest: date(2026, 12, 17) };
        assert!(w.makes(date(2026, 12, 17)));
        assert!(w.makes(date(2026, 12, 24)));
        assert!(!w.makes(date(2026, 12, 16)), "may arrive on the 17th: not surely by the 16th");
    }

    #[test]
    fn a_drafts_options_say_their_dates_and_whether_they_make_the_day() {
        // Tuesday 2026-12-08 10:00 in New York; Hearth & Home (cut-off 14:00, one handling
        // day) to the US: standard Mon 14 – Wed 16, express Thu 10 – Fri 11.
        let now = at("America/New_York", 2026, 12, 8, 10, 0);
        let options =
            delivery_options(&["hearth-home"], "US", Some("2026-12-15"), now, |s| Money::new(s as i64, Currency::USD))
                .unwrap();
        let dates: Vec<(&str, &str, Option<bool>)> =
            options.iter().map(|o| (o.earliest.as_str(), o.latest.as_str(), o.in_time)).collect();
        assert_eq!(dates, [("2026-12-14", "2026-12-16", Some(false)), ("2026-12-10", "2026-12-11", Some(true))]);
        assert_eq!(options[1].shipping, ShippingSpeed::Express);
        let without = delivery_options(&["hearth-home"], "US", None, now, |_| Money::new(0, Currency::USD)).unwrap();
        assert!(without.iter().all(|o| o.in_time.is_none()));
        assert!(
            delivery_options(&["hearth-home"], "US", Some("18 Dec"), now, |_| Money::new(0, Currency::USD)).is_err()
        );
    }

    #[test]
    fn a_parcel_from_several_merchants_arrives_when_its_slowest_part_does() {
        // Tuesday 2026-12-08 10:00 in New York: Hearth & Home ships the next business day,
        // Little Wonders (Chicago, two handling days) the one after.
        let now = at("America/New_York", 2026, 12, 8, 10, 0);
        let one = |m: &str| windows(&[m], "US", now).unwrap();
        let both = windows(&["hearth-home", "little-wonders"], "US", now).unwrap();
        for (i, (speed, w)) in both.iter().enumerate() {
            let (a, b) = (one("hearth-home")[i].1, one("little-wonders")[i].1);
            assert!(a.latest < b.latest, "{speed:?}: the slower merchant is slower");
            assert_eq!(*w, Window { earliest: a.earliest.max(b.earliest), latest: a.latest.max(b.latest) });
        }
        assert_eq!(windows(&["hearth-home", "hearth-home"], "US", now).unwrap(), one("hearth-home"));
    }

    #[test]
    fn acp_bounds_span_whole_days_in_the_destinations_zone() {
        let w = Window { earliest: date(2026, 12, 14), latest: date(2026, 12, 16) };
        // Chicago is UTC−6 in December.
        assert_eq!(bounds(&w, "US").unwrap(), ("2026-12-14T06:00:00Z".to_string(), "2026-12-17T05:59:59Z".to_string()));
        // Auckland is UTC+13 in December: the first day starts the evening before in UTC.
        assert_eq!(bounds(&w, "NZ").unwrap().0, "2026-12-13T11:00:00Z");
    }

    #[test]
    fn every_table_zone_is_known_and_express_is_never_slower() {
        let now = at("UTC", 2026, 12, 7, 12, 0);
        for (id, handling) in HANDLING.iter().map(|(id, h)| (*id, h)).chain([("default", &DEFAULT_HANDLING)]) {
            for (country, transit) in TRANSIT.iter().map(|(c, t)| (*c, t)).chain([("other", &OTHER_COUNTRIES)]) {
                let standard = window(handling, transit, ShippingSpeed::Standard, now).unwrap();
                let express = window(handling, transit, ShippingSpeed::Express, now).unwrap();
                assert!(express.latest <= standard.latest, "{id} → {country}");
                assert!(standard.earliest <= standard.latest && express.earliest <= express.latest);
            }
        }
        assert_eq!(windows(&["nobody"], "ZZ", now).unwrap().len(), 2);
    }
}
