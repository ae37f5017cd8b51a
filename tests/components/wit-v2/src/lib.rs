//! A scorer built against a hypothetical cautilus:plugin@0.2.0, which the
//! 0.1.0 host must refuse with a clear version error.

wit_bindgen::generate!({
    inline: "
        package cautilus:plugin@0.2.0;
        interface scorer-api {
            describe: func() -> string;
        }
        world scorer {
            export scorer-api;
        }
    ",
    world: "scorer",
});

struct Component;

impl exports::cautilus::plugin::scorer_api::Guest for Component {
    fn describe() -> String {
        "from the future".into()
    }
}

export!(Component);
