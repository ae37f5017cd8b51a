//! A scorer built against a hypothetical cautilus:plugin@0.1.2 (a newer
//! patch of the host's line), which the 0.1.1 host must refuse, saying to
//! upgrade cautilus: it may call what this host lacks.

wit_bindgen::generate!({
    inline: "
        package cautilus:plugin@0.1.2;
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
        "from the next patch".into()
    }
}

export!(Component);
