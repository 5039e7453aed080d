//! The TSBS IoT queries, plus one truck's history and the 10 newest rows. Tags are columns of
//! `readings` and `diagnostics` (there is no separate tags table), so TSBS's joins with `tags`
//! become filters and groupings on those columns. Names and semantics follow TSBS's IoT use case;
//! durations are computed in seconds rather than as intervals.

use rand::Rng;

use super::{params, window, Query};
use crate::gen::iot::{truck_name, FLEET_NAMES};
use crate::gen::GenSpec;

const HOUR: i64 = 3_600_000_000;

fn fleet(spec: &GenSpec, query: &str) -> &'static str {
    let mut r = params(spec, query);
    FLEET_NAMES[r.random_range(0..FLEET_NAMES.len())]
}

/// The newest row of each truck in `table`, with `cols`, for trucks of `fleet`.
fn newest_per_truck(table: &str, cols: &str, fleet: &str) -> String {
    format!(
        "SELECT {cols} FROM (SELECT {cols}, row_number() OVER (PARTITION BY name ORDER BY ts DESC) AS rn \
         FROM iot.{table} WHERE fleet = '{fleet}') t WHERE rn = 1"
    )
}

/// The IoT suite.
pub fn queries(spec: &GenSpec) -> Vec<Query> {
    let mut q = vec![];

    let f = fleet(spec, "last-loc");
    q.push(Query::new(
        "last-loc",
        "the newest position of each truck of one fleet",
        format!(
            "{} ORDER BY name",
            newest_per_truck("readings", "name, driver, latitude, longitude", f)
        ),
    ));

    let f = fleet(spec, "low-fuel");
    q.push(Query::new(
        "low-fuel",
        "trucks of one fleet whose newest fuel state is below 10%",
        format!(
            "SELECT name, driver, fuel_state FROM ({}) l WHERE fuel_state < 0.1 ORDER BY name",
            newest_per_truck("diagnostics", "name, driver, fuel_state", f)
        ),
    ));

    let f = fleet(spec, "high-load");
    q.push(Query::new(
        "high-load",
        "trucks of one fleet whose newest load is above 90% of capacity",
        format!(
            "SELECT name, driver, current_load, load_capacity FROM ({}) l \
             WHERE current_load / load_capacity > 0.9 ORDER BY name",
            newest_per_truck("diagnostics", "name, driver, current_load, load_capacity", f)
        ),
    ));

    let mut r = params(spec, "stationary-trucks");
    let f = FLEET_NAMES[r.random_range(0..FLEET_NAMES.len())];
    let (a, b) = window(&mut r, spec, 10 * 60_000_000);
    q.push(
        Query::new(
            "stationary-trucks",
            "trucks of one fleet with an average velocity below 1 km/h over 10 minutes",
            format!(
                "SELECT name, driver FROM iot.readings WHERE ts >= {a} AND ts < {b} AND fleet = '{f}' \
             GROUP BY name, driver HAVING avg(velocity) < 1 ORDER BY name"
            ),
        )
        .over(10 * 60_000_000),
    );

    let mut r = params(spec, "long-driving-sessions");
    let f = FLEET_NAMES[r.random_range(0..FLEET_NAMES.len())];
    let (a, b) = window(&mut r, spec, 4 * HOUR);
    q.push(Query::new(
        "long-driving-sessions",
        "trucks of one fleet that drove (average velocity > 1) in more than 22 of the 24 ten-minute periods of 4 hours",
        format!(
            "SELECT name, driver FROM (SELECT name, driver, time_bucket(INTERVAL '10 minutes', ts) AS ten_minutes \
             FROM iot.readings WHERE fleet = '{f}' AND ts >= {a} AND ts < {b} \
             GROUP BY name, driver, ten_minutes HAVING avg(velocity) > 1) s \
             GROUP BY name, driver HAVING count(*) > 22 ORDER BY name"
        ),
    ).over(4 * HOUR));

    let mut r = params(spec, "long-daily-sessions");
    let f = FLEET_NAMES[r.random_range(0..FLEET_NAMES.len())];
    let (a, b) = window(&mut r, spec, 24 * HOUR);
    q.push(
        Query::new(
            "long-daily-sessions",
            "trucks of one fleet that drove more than 10 hours (60 ten-minute periods) in 24 hours",
            format!(
                "SELECT name, driver FROM (SELECT name, driver, time_bucket(INTERVAL '10 minutes', ts) AS ten_minutes \
             FROM iot.readings WHERE fleet = '{f}' AND ts >= {a} AND ts < {b} \
             GROUP BY name, driver, ten_minutes HAVING avg(velocity) > 1) s \
             GROUP BY name, driver HAVING count(*) > 60 ORDER BY name"
            ),
        )
        .over(24 * HOUR),
    );

    q.push(Query::new(
        "avg-vs-projected-fuel-consumption",
        "average fuel consumption against the nominal one, per fleet, while moving",
        "SELECT fleet, avg(fuel_consumption) AS avg_fuel_consumption, \
         avg(nominal_fuel_consumption) AS projected_fuel_consumption \
         FROM iot.readings WHERE velocity > 1 GROUP BY fleet ORDER BY fleet"
            .to_string(),
    ));

    q.push(Query::new(
        "avg-daily-driving-duration",
        "average hours driven per day, per truck",
        "WITH driving AS (SELECT fleet, name, driver, time_bucket(INTERVAL '10 minutes', ts) AS ten_minutes \
         FROM iot.readings GROUP BY fleet, name, driver, ten_minutes HAVING avg(velocity) > 1), \
         daily AS (SELECT fleet, name, driver, date_trunc('day', ten_minutes) AS day, count(*) / 6.0 AS hours \
         FROM driving GROUP BY fleet, name, driver, day) \
         SELECT fleet, name, driver, avg(hours) AS avg_daily_hours FROM daily \
         GROUP BY fleet, name, driver ORDER BY fleet, name"
            .to_string(),
    ));

    q.push(Query::new(
        "avg-daily-driving-session",
        "average length (minutes) of a driving session without a stop, per truck and day",
        "WITH status AS (SELECT name, time_bucket(INTERVAL '10 minutes', ts) AS ten_minutes, \
         avg(velocity) > 5 AS driving FROM iot.readings GROUP BY name, ten_minutes), \
         changes AS (SELECT name, ten_minutes AS start, \
         lead(ten_minutes) OVER (PARTITION BY name ORDER BY ten_minutes) AS stop, driving \
         FROM (SELECT name, ten_minutes, driving, \
         lag(driving) OVER (PARTITION BY name ORDER BY ten_minutes) AS prev FROM status) x \
         WHERE prev IS NULL OR driving <> prev) \
         SELECT name, date_trunc('day', start) AS day, \
         avg(date_part('epoch', stop) - date_part('epoch', start)) / 60.0 AS avg_session_minutes \
         FROM changes WHERE driving GROUP BY name, day ORDER BY name, day"
            .to_string(),
    ));

    q.push(Query::new(
        "avg-load",
        "average load as a share of capacity, per fleet, model and capacity",
        "SELECT fleet, model, load_capacity, avg(avg_load / load_capacity) AS avg_load_share FROM \
         (SELECT name, fleet, model, load_capacity, avg(current_load) AS avg_load FROM iot.diagnostics \
         GROUP BY name, fleet, model, load_capacity) d \
         GROUP BY fleet, model, load_capacity ORDER BY fleet, model, load_capacity"
            .to_string(),
    ));

    q.push(Query::new(
        "daily-activity",
        "share of ten-minute periods per day that trucks were in service (average status >= 1), per fleet and model",
        "SELECT fleet, model, day, count(*) / 144.0 / count(DISTINCT name) AS daily_activity FROM \
         (SELECT fleet, model, name, date_trunc('day', ts) AS day, time_bucket(INTERVAL '10 minutes', ts) AS ten_minutes \
         FROM iot.diagnostics GROUP BY fleet, model, name, day, ten_minutes HAVING avg(status) >= 1) a \
         GROUP BY fleet, model, day ORDER BY fleet, model, day"
            .to_string(),
    ));

    q.push(Query::new(
        "breakdown-frequency",
        "how often trucks of each model went from working to broken down (status 0 in at least half a ten-minute period)",
        "WITH per_period AS (SELECT name, model, time_bucket(INTERVAL '10 minutes', ts) AS ten_minutes, \
         sum(CASE WHEN status = 0 THEN 1 ELSE 0 END) * 2 >= count(*) AS broken_down \
         FROM iot.diagnostics GROUP BY name, model, ten_minutes), \
         changes AS (SELECT model, broken_down, \
         lead(broken_down) OVER (PARTITION BY name ORDER BY ten_minutes) AS next_broken_down FROM per_period) \
         SELECT model, count(*) AS breakdowns FROM changes \
         WHERE NOT broken_down AND next_broken_down GROUP BY model ORDER BY model"
            .to_string(),
    ));

    let mut r = params(spec, "single-truck");
    let truck = truck_name(r.random_range(0..spec.scale));
    let (a, b) = window(&mut r, spec, 12 * HOUR);
    q.push(
        Query::new(
            "single-truck",
            "one truck's readings over 12 hours, in time order",
            format!(
                "SELECT ts, latitude, longitude, velocity, fuel_consumption FROM iot.readings \
             WHERE name = '{truck}' AND ts >= {a} AND ts < {b} ORDER BY ts"
            ),
        )
        .over(12 * HOUR),
    );

    q.push(Query::new(
        "newest-10",
        "the 10 newest readings",
        "SELECT * FROM iot.readings ORDER BY ts DESC, name LIMIT 10".to_string(),
    ));
    q
}
