"""Reference token ids and embeddings for giftgenius-meaning's tests, from code we did not write
in Rust: Hugging Face `tokenizers` reads the model's own tokenizer.json, and a numpy forward pass
(float64, a dozen lines below) runs the BERT encoder from model.safetensors.

Writes tests/fixtures/reference.json: for each string in TOKEN_TEXTS its ids, and for each in
EMBED_TEXTS its full embedding (rounded to 6 decimals; the Rust test checks cosine >= 0.9999
and the first 8 values).

Run it (nothing here is a dependency of the build; any scratch venv will do):

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install tokenizers numpy safetensors
    cargo xtask setup    # installs the model into ~/.cache/giftgenius/models/all-MiniLM-L6-v2
    /tmp/ref/bin/python crates/giftgenius-meaning/reference/reference.py \
        ~/.cache/giftgenius/models/all-MiniLM-L6-v2 > crates/giftgenius-meaning/tests/fixtures/reference.json

Produced for the committed fixture with tokenizers 0.23.3, numpy 2.4.6, safetensors 0.8.0.
"""

import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

TOKEN_TEXTS = [
    "",
    "Stargazing",
    "making beats",
    "Café crème brûlée",
    "jardinería y café para mi abuela",
    "Ele adora futebol, música e viagens à praia!",
    "¿Qué le regalo a mi mamá? ¡Algo útil!",
    "self-care & pour-over coffee... (really!)",
    "I ❤️ emoji 🎁🚀 gifts 👩🏽‍🍳",
    "supercalifragilisticexpialidocious",
    "pneumonoultramicroscopicsilicovolcanoconiosis",
    "a" * 101 + " short",
    "b" * 100,
    "星空观测 and 天体写真",
    "東京タワーのおみやげ",
    "한국어 선물",
    "Ünïcödé ÅÇÈ naïve façade",
    "tab\there new\nline\r\nend",
    "zero\u200bwidth soft\u00adhyphen nul\u0000char",
    "[CLS] literal [SEP] tokens[MASK]inside",
    "The Straße in İstanbul",
    "ﬁne ligature ½ ² ᵃ",
    "$100 budget, 50% off; email@example.com #hashtag ~tilde^caret`backtick|pipe",
    "mañana, pão de queijo, coração, São Paulo",
    "private\ue000use unassigned\u0378x melting 🫠 face",
    "gift " * 200,
    "Hip-hop, K-pop & lo-fi: the 90's!!!",
]

EMBED_TEXTS = [
    "",
    "stargazing",
    "astronomy",
    "making beats",
    "music production",
    "dinner parties",
    "serveware",
    "coffee",
    "espresso",
    "cooking",
    "Minecraft",
    "pixel art",
    "new dad",
    "self-care",
    "jardinería",
    "música e viagens",
    "Planisphere: a rotating star map for the backyard, glows in the dark.",
    "Compact 25-key MIDI keyboard with drum pads, USB powered, works with every DAW.",
    "Ceramic serving platter, hand-glazed, big enough for a dinner party roast.",
    "cozy " * 150,
]


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


erf = np.vectorize(math.erf)


def embed(weights, ids, layers=6, heads=12):
    w = lambda name: weights[name]
    n = len(ids)
    x = w("embeddings.word_embeddings.weight")[ids] + w("embeddings.position_embeddings.weight")[:n]
    x = x + w("embeddings.token_type_embeddings.weight")[0]
    x = layer_norm(x, w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
    for i in range(layers):
        p = f"encoder.layer.{i}."
        dense = lambda x, name: x @ w(p + name + ".weight").T + w(p + name + ".bias")
        split = lambda t: t.reshape(n, heads, -1).transpose(1, 0, 2)
        q, k, v = (split(dense(x, f"attention.self.{part}")) for part in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, -1)
        x = layer_norm(x + dense(context, "attention.output.dense"),
                       w(p + "attention.output.LayerNorm.weight"), w(p + "attention.output.LayerNorm.bias"))
        h = dense(x, "intermediate.dense")
        h = h * 0.5 * (1.0 + erf(h / math.sqrt(2.0)))
        x = layer_norm(x + dense(h, "output.dense"), w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias"))
    mean = x.mean(0)
    return mean / np.linalg.norm(mean)


def main():
    model_dir = sys.argv[1]
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.no_padding()  # tokenizer.json pads to 128; the model never needs padding for one text
    weights = {k: v.astype(np.float64) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
    tokens = [{"text": t, "ids": tokenizer.encode(t).ids} for t in TOKEN_TEXTS]
    embeddings = []
    for t in EMBED_TEXTS:
        vector = embed(weights, tokenizer.encode(t).ids)
        embeddings.append({"text": t, "embedding": [round(float(v), 6) for v in vector]})
    # One entry per line: diffs of a regenerated file show which string changed.
    line = lambda item: json.dumps(item, ensure_ascii=False)
    sys.stdout.write('{"tokens": [\n' + ",\n".join(map(line, tokens)) + '\n],\n"embeddings": [\n')
    sys.stdout.write(",\n".join(map(line, embeddings)) + "\n]}\n")


if __name__ == "__main__":
    main()
