//! Any text a person or a catalog sends is tokenized and embedded without a panic: the
//! tokenizer and the encoder read outside data (interests, `about`, catalog words).

use proptest::prelude::*;

use crate::model;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_text_tokenizes_within_bounds_and_embeds_to_a_unit_vector(text in any::<String>()) {
        let model = model();
        let ids = model.token_ids(&text);
        let empty = model.token_ids("");
        prop_assert!(ids.len() >= 2 && ids.len() <= giftgenius_meaning::MAX_TOKENS, "{} tokens", ids.len());
        prop_assert_eq!(ids.first(), empty.first(), "starts with [CLS]");
        prop_assert_eq!(ids.last(), empty.last(), "ends with [SEP]");
        let e = model.embed(&text);
        prop_assert!((e.dot(&e) - 1.0).abs() < 1e-3, "not a unit vector: {}", e.dot(&e));
    }
}
