-- Usage limits: calls counted per subject, per kind of usage, per period (`period` = whole
-- periods since the Unix epoch: UTC days for suggestions, hours for drafts and checkout
-- sessions). Replaces daily_suggestions, whose counts move over unchanged.
CREATE TABLE usage_counters (
    subject TEXT NOT NULL,
    usage   TEXT NOT NULL,
    period  BIGINT NOT NULL,
    count   BIGINT NOT NULL,
    PRIMARY KEY (subject, usage, period)
);
CREATE INDEX usage_counters_period ON usage_counters (usage, period);
INSERT INTO usage_counters (subject, usage, period, count)
    SELECT subject, 'suggestions', day, count FROM daily_suggestions;
DROP TABLE daily_suggestions;
