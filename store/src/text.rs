//! States stored as text: a Rust enum per column, its text written by the store only
//! (`as_str`), and read back strictly (`parse`: an unknown value is a corrupt row).

/// An enum whose variants are stored as the given texts: `as_str`, `parse` and `Display`.
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored text.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The variant stored as `s`; anything else is a corrupt row.
            pub fn parse(s: &str) -> $crate::Result<$name> {
                match s {
                    $( $text => Ok($name::$variant), )+
                    other => Err($crate::StoreError::Corrupt(format!(
                        concat!("unknown ", stringify!($name), " {:?}"),
                        other
                    ))),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(super) use text_enum;
