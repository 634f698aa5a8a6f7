-- Daily suggestion limit: suggest_gifts calls counted per subject per UTC day
-- (`day` = whole days since the Unix epoch). Old days are pruned.

CREATE TABLE daily_suggestions (
    subject TEXT NOT NULL,
    day     INTEGER NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (subject, day)
);
CREATE INDEX daily_suggestions_day ON daily_suggestions (day);
