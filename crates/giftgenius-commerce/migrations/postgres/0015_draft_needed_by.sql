-- The day the person needs the gift by (`prepare_order`'s `needed_by`, YYYY-MM-DD), so a draft
-- read again (reopen, commit, the hosted page) still says which shipping options make it.
ALTER TABLE drafts ADD COLUMN needed_by TEXT;
