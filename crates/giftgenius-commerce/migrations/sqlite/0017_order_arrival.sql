-- The delivery window an order was promised when it was placed (the first and last day it may
-- arrive, YYYY-MM-DD in the recipient's calendar): get_order, the order card, the status page
-- and ACP's estimated_delivery say it. NULL on orders placed before it was kept.
ALTER TABLE orders ADD COLUMN arrives_earliest TEXT;
ALTER TABLE orders ADD COLUMN arrives_latest TEXT;
