-- Gift options of a draft and of the order placed from it: the gift wrap's cost in the order's
-- currency (NULL: not wrapped; included in total_minor) and a gift receipt (1: the packing slip
-- and the recipient's page show no prices). Orders keep their own copy: drafts are pruned.
ALTER TABLE drafts ADD COLUMN gift_wrap_minor INTEGER;
ALTER TABLE drafts ADD COLUMN gift_receipt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN gift_wrap_minor INTEGER;
ALTER TABLE orders ADD COLUMN gift_receipt INTEGER NOT NULL DEFAULT 0;
