//! What a buyer reads in an ACP checkout session, in English, Spanish and Portuguese
//! (docs/acp.md §13.4): message `content`, `totals[].display_text`, fulfilment option titles.
//!
//! One table per language ([`EN`], [`ES`], [`PT`]), each listing every [`Word`] once in the
//! enum's order (the array length makes a missing entry fail to compile; a test checks the
//! order). These live here, not in the widget's catalogs, because the widget's wasm carries
//! every string of those. Address and gift-message problems reuse the widget crate's field-rule
//! sentences (`giftgenius_words::field_text`), so a field problem is worded in one place.
//! Codes, params and everything else machine-readable never change with the language.

use giftgenius_types::FieldError;
use giftgenius_words::field_text::field_message;
pub use giftgenius_words::i18n::Lang;
use giftgenius_words::i18n::fill;

/// A text of the session. Texts name their parameters `{like_this}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    Items,
    Subtotal,
    Shipping,
    Tax,
    Total,
    Refunded,
    GiftWrap,
    OptionStandard,
    OptionExpress,
    NoLongerSold,
    OneGiftPerSession,
    OnlyLeftOf,
    OnlyLeft,
    AtMostPerOrder,
    PriceIsCurrent,
    AddressNeeded,
    SessionExpired,
    CodeInvalid,
    TokenExpired,
    TokenRefused,
    PaymentDeclined,
    TermsNotOffered,
    ApprovalNotOffered,
    PurchaseOrderNotOffered,
    OnlyShipping,
    WrapDescription,
    WrapNotOffered,
    WrapMoreThanGifts,
    FieldName,
    FieldLineOne,
    FieldLineTwo,
    FieldCity,
    FieldState,
    FieldPostalCode,
    FieldCountry,
    FieldGiftMessage,
}

const COUNT: usize = Word::FieldGiftMessage as usize + 1;

type Table = [(Word, &'static str); COUNT];

const EN: Table = [
    (Word::Items, "Items"),
    (Word::Subtotal, "Subtotal"),
    (Word::Shipping, "Shipping"),
    (Word::Tax, "Tax"),
    (Word::Total, "Total"),
    (Word::Refunded, "Refunded"),
    (Word::GiftWrap, "Gift wrap"),
    (Word::OptionStandard, "Standard"),
    (Word::OptionExpress, "Express"),
    (Word::NoLongerSold, "This item is no longer sold."),
    (Word::OneGiftPerSession, "One gift per checkout session for now: start another session for this item."),
    (Word::OnlyLeftOf, "Only {available} left of {title}."),
    (Word::OnlyLeft, "Only {available} left."),
    (Word::AtMostPerOrder, "At most {max} of one item per order."),
    (Word::PriceIsCurrent, "The price is our catalog's current price."),
    (Word::AddressNeeded, "A shipping address is needed."),
    (Word::SessionExpired, "This checkout session has expired; create a new one."),
    (Word::CodeInvalid, "The code {code} is not valid: GiftGenius runs no promotions."),
    (Word::TokenExpired, "The payment token has expired; ask the payment provider for a new one."),
    (
        Word::TokenRefused,
        "This payment token cannot pay for this session (used already, or made for another amount, currency, \
         session or merchant); nothing was charged.",
    ),
    (Word::PaymentDeclined, "The payment was declined; nothing was charged."),
    (
        Word::TermsNotOffered,
        "We are paid by card when the order is placed: payment terms are not offered; nothing was charged.",
    ),
    (
        Word::ApprovalNotOffered,
        "An order cannot wait for an approval here: it is paid by card when it is placed; nothing was charged.",
    ),
    (
        Word::PurchaseOrderNotOffered,
        "A purchase order cannot pay for this order: pay by card (a purchase order number may go with it); nothing was charged.",
    ),
    (Word::OnlyShipping, "GiftGenius only ships: {kind} is not offered; choose one of the shipping options."),
    (Word::WrapDescription, "Each gift wrapped by {merchant}."),
    (Word::WrapNotOffered, "{merchant} does not gift-wrap: remove the gift wrap item."),
    (Word::WrapMoreThanGifts, "Gift wrap for at most {quantity} gifts, one per gift in this session."),
    (Word::FieldName, "Recipient's name"),
    (Word::FieldLineOne, "Address line 1"),
    (Word::FieldLineTwo, "Address line 2"),
    (Word::FieldCity, "City"),
    (Word::FieldState, "State or province"),
    (Word::FieldPostalCode, "Postal code"),
    (Word::FieldCountry, "Country"),
    (Word::FieldGiftMessage, "Gift message"),
];

const ES: Table = [
    (Word::Items, "Artículos"),
    (Word::Subtotal, "Subtotal"),
    (Word::Shipping, "Envío"),
    (Word::Tax, "Impuestos"),
    (Word::Total, "Total"),
    (Word::Refunded, "Reembolsado"),
    (Word::GiftWrap, "Envoltorio de regalo"),
    (Word::OptionStandard, "Estándar"),
    (Word::OptionExpress, "Exprés"),
    (Word::NoLongerSold, "Este artículo ya no está a la venta."),
    (Word::OneGiftPerSession, "Por ahora, un regalo por sesión de pago: inicia otra sesión para este artículo."),
    (Word::OnlyLeftOf, "Solo quedan {available} de {title}."),
    (Word::OnlyLeft, "Solo quedan {available}."),
    (Word::AtMostPerOrder, "Como máximo {max} unidades de un artículo por pedido."),
    (Word::PriceIsCurrent, "El precio es el precio actual de nuestro catálogo."),
    (Word::AddressNeeded, "Falta una dirección de envío."),
    (Word::SessionExpired, "Esta sesión de pago ha caducado; crea una nueva."),
    (Word::CodeInvalid, "El código {code} no es válido: GiftGenius no tiene promociones."),
    (Word::TokenExpired, "El token de pago ha caducado; pide uno nuevo al proveedor de pagos."),
    (
        Word::TokenRefused,
        "Este token de pago no sirve para esta sesión (ya se usó o se creó para otro importe, moneda, sesión \
         o comercio); no se ha cobrado nada.",
    ),
    (Word::PaymentDeclined, "El pago fue rechazado; no se ha cobrado nada."),
    (Word::TermsNotOffered, "Cobramos con tarjeta al hacer el pedido: no ofrecemos plazos de pago; no se cobró nada."),
    (
        Word::ApprovalNotOffered,
        "Un pedido no puede esperar una aprobación aquí: se paga con tarjeta al hacerlo; no se cobró nada.",
    ),
    (
        Word::PurchaseOrderNotOffered,
        "Una orden de compra no puede pagar este pedido: paga con tarjeta (puede acompañarla un número de orden de compra); no se cobró nada.",
    ),
    (Word::OnlyShipping, "GiftGenius solo hace envíos: {kind} no está disponible; elige una de las opciones de envío."),
    (Word::WrapDescription, "Cada regalo envuelto por {merchant}."),
    (Word::WrapNotOffered, "{merchant} no envuelve para regalo: quita el artículo de envoltorio."),
    (Word::WrapMoreThanGifts, "Envoltorio para {quantity} regalos como máximo, uno por regalo de esta sesión."),
    (Word::FieldName, "Nombre del destinatario"),
    (Word::FieldLineOne, "Dirección, línea 1"),
    (Word::FieldLineTwo, "Dirección, línea 2"),
    (Word::FieldCity, "Ciudad"),
    (Word::FieldState, "Estado o provincia"),
    (Word::FieldPostalCode, "Código postal"),
    (Word::FieldCountry, "País"),
    (Word::FieldGiftMessage, "Mensaje de regalo"),
];

const PT: Table = [
    (Word::Items, "Itens"),
    (Word::Subtotal, "Subtotal"),
    (Word::Shipping, "Frete"),
    (Word::Tax, "Impostos"),
    (Word::Total, "Total"),
    (Word::Refunded, "Reembolsado"),
    (Word::GiftWrap, "Embrulho para presente"),
    (Word::OptionStandard, "Padrão"),
    (Word::OptionExpress, "Expressa"),
    (Word::NoLongerSold, "Este item não está mais à venda."),
    (Word::OneGiftPerSession, "Por enquanto, um presente por sessão de pagamento: inicie outra sessão para este item."),
    (Word::OnlyLeftOf, "Restam apenas {available} de {title}."),
    (Word::OnlyLeft, "Restam apenas {available}."),
    (Word::AtMostPerOrder, "No máximo {max} unidades de um item por pedido."),
    (Word::PriceIsCurrent, "O preço é o preço atual do nosso catálogo."),
    (Word::AddressNeeded, "Falta um endereço de entrega."),
    (Word::SessionExpired, "Esta sessão de pagamento expirou; crie uma nova."),
    (Word::CodeInvalid, "O código {code} não é válido: a GiftGenius não tem promoções."),
    (Word::TokenExpired, "O token de pagamento expirou; peça um novo ao provedor de pagamento."),
    (
        Word::TokenRefused,
        "Este token de pagamento não serve para esta sessão (já foi usado ou foi criado para outro valor, moeda, \
         sessão ou loja); nada foi cobrado.",
    ),
    (Word::PaymentDeclined, "O pagamento foi recusado; nada foi cobrado."),
    (
        Word::TermsNotOffered,
        "Cobramos no cartão ao fazer o pedido: não oferecemos prazos de pagamento; nada foi cobrado.",
    ),
    (
        Word::ApprovalNotOffered,
        "Um pedido não pode aguardar uma aprovação aqui: é pago no cartão ao ser feito; nada foi cobrado.",
    ),
    (
        Word::PurchaseOrderNotOffered,
        "Uma ordem de compra não pode pagar este pedido: pague com cartão (um número de ordem de compra pode acompanhá-lo); nada foi cobrado.",
    ),
    (Word::OnlyShipping, "O GiftGenius só faz envios: {kind} não está disponível; escolha uma das opções de envio."),
    (Word::WrapDescription, "Cada presente embrulhado por {merchant}."),
    (Word::WrapNotOffered, "{merchant} não embrulha para presente: remova o item de embrulho."),
    (Word::WrapMoreThanGifts, "Embrulho para no máximo {quantity} presentes, um por presente desta sessão."),
    (Word::FieldName, "Nome do destinatário"),
    (Word::FieldLineOne, "Endereço, linha 1"),
    (Word::FieldLineTwo, "Endereço, linha 2"),
    (Word::FieldCity, "Cidade"),
    (Word::FieldState, "Estado ou província"),
    (Word::FieldPostalCode, "CEP / código postal"),
    (Word::FieldCountry, "País"),
    (Word::FieldGiftMessage, "Mensagem de presente"),
];

/// The text of `word` in `lang`.
pub fn text(lang: Lang, word: Word) -> &'static str {
    let table = match lang {
        Lang::En => &EN,
        Lang::Es => &ES,
        Lang::Pt => &PT,
    };
    // The tables are in the enum's order (tested); the search is the safe fallback.
    match table.get(word as usize) {
        Some((w, text)) if *w == word => text,
        _ => table.iter().find(|(w, _)| *w == word).map_or("", |(_, text)| text),
    }
}

/// The text of `word` in `lang` with its `{name}` parameters filled in.
pub fn text_with(lang: Lang, word: Word, args: &[(&str, &str)]) -> String {
    fill(text(lang, word), args)
}

/// A field problem for the buyer: the field's name, then the widget's sentence for its rule
/// ("Código postal: Usa el formato de código postal de US, por ejemplo 94103."). `field` is the
/// ACP name (`postal_code`, `order_notes`); an unknown one is named as it is.
pub fn field_problem(lang: Lang, field: &str, problem: &FieldError) -> String {
    let label = match field {
        "name" => text(lang, Word::FieldName),
        "line_one" => text(lang, Word::FieldLineOne),
        "line_two" => text(lang, Word::FieldLineTwo),
        "city" => text(lang, Word::FieldCity),
        "state" => text(lang, Word::FieldState),
        "postal_code" => text(lang, Word::FieldPostalCode),
        "country" => text(lang, Word::FieldCountry),
        "order_notes" => text(lang, Word::FieldGiftMessage),
        other => other,
    };
    format!("{label}: {}", field_message(lang, problem))
}

/// The language a session speaks (docs/acp.md §13.4): its create request's `locale` when sent
/// (English when not one of ours), else the best of `Accept-Language` we speak, else English.
pub fn session_lang(locale: Option<&str>, accept_language: Option<&str>) -> Lang {
    match locale.map(str::trim).filter(|l| !l.is_empty()) {
        Some(locale) => Lang::from_locale(locale),
        None => accept_language.map_or(Lang::En, preferred),
    }
}

/// The language of `Accept-Language` we speak with the highest quality (the first of equals);
/// English when none is ours. `q=0` means "not this one"; a malformed entry is skipped.
pub fn preferred(accept_language: &str) -> Lang {
    let mut best: Option<(Lang, f32)> = None;
    for entry in accept_language.split(',') {
        let mut parts = entry.split(';');
        let tag = parts.next().unwrap_or("").trim();
        let primary = tag.split(['-', '_']).next().unwrap_or("");
        let ours = Lang::ALL.into_iter().find(|lang| primary.eq_ignore_ascii_case(lang.code()));
        let quality = parts.map(str::trim).find_map(|p| p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")));
        let quality = match quality {
            None => Some(1.0),
            Some(q) => q.trim().parse::<f32>().ok().filter(|q| (0.0..=1.0).contains(q)),
        };
        if let (Some(lang), Some(q)) = (ours, quality)
            && q > 0.0
            && best.is_none_or(|(_, b)| q > b)
        {
            best = Some((lang, q));
        }
    }
    best.map_or(Lang::En, |(lang, _)| lang)
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_types::FieldRule;

    #[test]
    fn every_table_lists_every_word_once_in_order() {
        for (name, table) in [("EN", &EN), ("ES", &ES), ("PT", &PT)] {
            for (i, (word, text)) in table.iter().enumerate() {
                assert_eq!(*word as usize, i, "{name}[{i}] is {word:?}");
                assert!(!text.trim().is_empty(), "{name} {word:?} is empty");
            }
        }
    }

    #[test]
    fn parameters_are_the_same_in_every_language() {
        let names = |text: &str| {
            let mut names: Vec<String> =
                text.split('{').skip(1).filter_map(|s| s.split_once('}')).map(|(n, _)| n.to_string()).collect();
            names.sort();
            names
        };
        for (i, (word, en)) in EN.iter().enumerate() {
            assert_eq!(names(ES[i].1), names(en), "ES {word:?}");
            assert_eq!(names(PT[i].1), names(en), "PT {word:?}");
        }
    }

    #[test]
    fn the_locale_wins_then_the_best_accept_language_then_english() {
        assert_eq!(session_lang(Some("es-ES"), Some("pt-BR")), Lang::Es);
        assert_eq!(session_lang(Some("de-DE"), Some("pt-BR")), Lang::En, "an explicit locale we lack is English");
        assert_eq!(session_lang(None, Some("pt-BR,pt;q=0.9")), Lang::Pt);
        assert_eq!(session_lang(Some(" "), Some("pt-BR")), Lang::Pt);
        assert_eq!(session_lang(None, None), Lang::En);
        assert_eq!(preferred("de-DE,es;q=0.8,pt;q=0.9"), Lang::Pt, "highest quality among ours");
        assert_eq!(preferred("de-DE, fr;q=0.9"), Lang::En);
        assert_eq!(preferred("es;q=0,pt;q=0.1"), Lang::Pt, "q=0 is not acceptable");
        assert_eq!(preferred("es;q=abc, pt"), Lang::Pt, "a malformed quality is skipped");
        assert_eq!(preferred("pt;q=0.5, es;q=0.5"), Lang::Pt, "the first of equals");
        assert_eq!(preferred(""), Lang::En);
        assert_eq!(preferred("*"), Lang::En);
    }

    #[test]
    fn a_field_problem_names_the_field_and_says_the_rule() {
        let problem = FieldError::broke(
            "r.address.postal_code",
            FieldRule::PostalCodeShape { country: "US".into(), example: "94103".into() },
            "must look like 94103",
        );
        assert_eq!(
            field_problem(Lang::Es, "postal_code", &problem),
            "Código postal: Usa el formato de código postal de US, por ejemplo 94103."
        );
        assert_eq!(
            field_problem(Lang::En, "postal_code", &problem),
            "Postal code: Use the postal code format of US, e.g. 94103."
        );
    }
}
