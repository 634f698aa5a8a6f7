-- Baskets (issue 42): a draft and an order hold lines, several gifts with a quantity each.
-- `lines` is the JSON array of those lines, written once when the draft or the order is made.
-- The gift_id and quantity columns stay the first line (lists and logs name one gift). A row
-- whose `lines` is '[]' was written by an older server during an upgrade: its one line is those
-- columns, and the stock counts it from them.
ALTER TABLE drafts ADD COLUMN lines TEXT NOT NULL DEFAULT '[]';
ALTER TABLE orders ADD COLUMN lines TEXT NOT NULL DEFAULT '[]';
UPDATE drafts SET lines = json_array(json_object('gift_id', gift_id, 'quantity', quantity,
    'subtotal_minor', subtotal_minor, 'gift_wrap_minor', gift_wrap_minor));
-- An order's line price comes from its draft while the draft is kept (orders placed through ACP
-- or whose draft was pruned have none: their total says it).
UPDATE orders SET lines = json_array(json_object('gift_id', gift_id, 'gift_title', gift_title,
    'merchant', merchant, 'quantity', quantity,
    'subtotal_minor', (SELECT d.subtotal_minor FROM drafts d WHERE d.id = orders.draft_id),
    'gift_wrap_minor', gift_wrap_minor));

-- The stock's view of an order's lines: how many units of each gift it holds, so that the units
-- live orders take from a gift are found by gift (an index), whatever line they are on. Written
-- with the order in its transaction, never changed; the order's status says whether it holds them.
CREATE TABLE order_units (
    order_id        TEXT NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    gift_id         TEXT NOT NULL,
    quantity        INTEGER NOT NULL,
    PRIMARY KEY (order_id, gift_id)
);
CREATE INDEX order_units_by_gift ON order_units (gift_id);
INSERT INTO order_units (order_id, gift_id, quantity) SELECT id, gift_id, quantity FROM orders;
-- Orders an older server writes during an upgrade (their units are their first line).
CREATE INDEX orders_written_without_lines ON orders (gift_id) WHERE lines = '[]';
