-- The name or email each account signed in with (issue 39 item 7), as its verified access token
-- carried it when the account last got a card page link: the hosted card page shows whose
-- account a card is saved to and asks the person to confirm it is theirs. Replaced at every
-- link, deleted by delete-my-data, pruned with saved addresses.
CREATE TABLE account_names (
    subject        TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    updated_at_ms  BIGINT NOT NULL
);
