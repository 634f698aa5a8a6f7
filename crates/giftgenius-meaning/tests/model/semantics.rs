//! The model understands what gift requests mean: each pair's related term is nearer than an
//! unrelated one. The orderings are wide apart for this model (see the margins printed on
//! failure); a broken tokenizer, weight layout or pooling scrambles them.

use crate::model;

#[test]
fn related_gift_terms_are_nearer_than_unrelated_ones() {
    // (interest, what answers it, something it has nothing to do with)
    let triples = [
        ("stargazing", "astronomy", "cooking"),
        ("space", "telescope", "handbag"),
        ("making beats", "music production", "gardening"),
        ("making beats", "MIDI keyboard", "yoga mat"),
        ("dinner parties", "serveware", "hiking boots"),
        ("dinner parties", "hosting guests", "video games"),
        ("coffee", "espresso", "knitting"),
        ("pour-over coffee", "coffee brewing", "headphones"),
        ("Minecraft", "video games", "perfume"),
        ("new dad", "baby", "kitchen"),
        ("hip hop", "rap music", "hip belt"),
        ("self-care", "pampering", "self-watering planter"),
    ];
    let texts: Vec<&str> = triples.iter().flat_map(|&(a, b, c)| [a, b, c]).collect();
    let e = model().embed_many(&texts);
    let mut failures = Vec::new();
    for (i, (interest, related, unrelated)) in triples.iter().enumerate() {
        let (a, b, c) = (&e[3 * i], &e[3 * i + 1], &e[3 * i + 2]);
        let (near, far) = (a.cosine(b), a.cosine(c));
        if near <= far {
            failures.push(format!("{interest:?}: {related:?} {near:.3} <= {unrelated:?} {far:.3}"));
        }
    }
    assert!(failures.is_empty(), "orderings broken:\n{}", failures.join("\n"));
}

#[test]
fn a_text_is_nearest_to_itself_and_paraphrases_beat_other_topics() {
    let texts = ["a telescope for watching the stars", "a star-gazing telescope", "a set of cast-iron pans"];
    let e = model().embed_many(&texts);
    assert!((e[0].cosine(&e[0]) - 1.0).abs() < 1e-6);
    assert!(e[0].cosine(&e[1]) > 0.7, "paraphrase {}", e[0].cosine(&e[1]));
    assert!(e[0].cosine(&e[2]) < 0.3, "other topic {}", e[0].cosine(&e[2]));
}
