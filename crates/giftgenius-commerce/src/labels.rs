//! Prometheus label values as closed enums ([`label_values!`](crate::label_values)): the
//! payment outcomes here and the server's own sets use one definition of how a value is spelled
//! and encoded.

#[doc(hidden)]
pub use prometheus_client;

/// A closed set of label values: an enum, its wire spellings, and their encoding.
#[macro_export]
macro_rules! label_values {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant,)+ }

        impl $name {
            /// Every value (registration and tests use it; not every set needs it).
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The label value.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }
        }

        impl $crate::labels::prometheus_client::encoding::EncodeLabelValue for $name {
            fn encode(&self, encoder: &mut $crate::labels::prometheus_client::encoding::LabelValueEncoder) -> std::fmt::Result {
                std::fmt::Write::write_str(encoder, self.as_str())
            }
        }
    };
}
