//! What a `user_location`'s country tells the engines without a country parameter of their own:
//! SearXNG's `language` locale (`<language>-<COUNTRY>`, e.g. `en-GB`, `de-CH`, which SearXNG
//! passes on as a region to the engines that take one) and DuckDuckGo's `kl` region (e.g.
//! `uk-en`, `ch-de`, `jp-jp`). Both come from one table of facts: a country's principal
//! language, and its region on DuckDuckGo's list where it has one. A country not in the table
//! narrows nothing: the location stays advisory, as its city, region and time zone always are.

use crate::tools::UserLocation;

/// A country (ISO 3166-1 alpha-2, upper case), its principal language (ISO 639-1, lower
/// case), and its DuckDuckGo region when DuckDuckGo's list has one.
struct Country {
    code: &'static str,
    language: &'static str,
    duckduckgo: Option<&'static str>,
}

const fn country(
    code: &'static str,
    language: &'static str,
    duckduckgo: Option<&'static str>,
) -> Country {
    Country {
        code,
        language,
        duckduckgo,
    }
}

/// The countries known here. DuckDuckGo's regions are mostly `<country>-<language>`, with
/// exceptions kept as DuckDuckGo spells them: `uk-en` (GB), `jp-jp`, `kr-kr`, `no-no`,
/// `sl-sl` (SI), `hk-tzh`, `tw-tzh`, `xa-ar` (its Arabic region) and `xl-es` (its Latin
/// America, for the Spanish-speaking countries without a region of their own).
const COUNTRIES: &[Country] = &[
    // English
    country("GB", "en", Some("uk-en")),
    country("US", "en", Some("us-en")),
    country("CA", "en", Some("ca-en")),
    country("AU", "en", Some("au-en")),
    country("NZ", "en", Some("nz-en")),
    country("IE", "en", Some("ie-en")),
    country("IN", "en", Some("in-en")),
    country("ZA", "en", Some("za-en")),
    country("SG", "en", Some("sg-en")),
    country("PH", "en", Some("ph-en")),
    country("NG", "en", None),
    country("KE", "en", None),
    // German
    country("DE", "de", Some("de-de")),
    country("AT", "de", Some("at-de")),
    country("CH", "de", Some("ch-de")),
    country("LI", "de", None),
    // French
    country("FR", "fr", Some("fr-fr")),
    country("LU", "fr", None),
    country("MC", "fr", None),
    // Dutch
    country("NL", "nl", Some("nl-nl")),
    country("BE", "nl", Some("be-nl")),
    // Spanish
    country("ES", "es", Some("es-es")),
    country("MX", "es", Some("mx-es")),
    country("AR", "es", Some("ar-es")),
    country("CL", "es", Some("cl-es")),
    country("CO", "es", Some("co-es")),
    country("PE", "es", Some("pe-es")),
    country("VE", "es", Some("ve-es")),
    country("UY", "es", Some("xl-es")),
    country("EC", "es", Some("xl-es")),
    country("BO", "es", Some("xl-es")),
    country("PY", "es", Some("xl-es")),
    country("CR", "es", Some("xl-es")),
    country("PA", "es", Some("xl-es")),
    country("GT", "es", Some("xl-es")),
    country("HN", "es", Some("xl-es")),
    country("SV", "es", Some("xl-es")),
    country("NI", "es", Some("xl-es")),
    country("DO", "es", Some("xl-es")),
    country("CU", "es", Some("xl-es")),
    // Portuguese
    country("BR", "pt", Some("br-pt")),
    country("PT", "pt", Some("pt-pt")),
    // Italian
    country("IT", "it", Some("it-it")),
    country("SM", "it", None),
    // Nordic and Baltic
    country("SE", "sv", Some("se-sv")),
    country("NO", "nb", Some("no-no")),
    country("DK", "da", Some("dk-da")),
    country("FI", "fi", Some("fi-fi")),
    country("IS", "is", None),
    country("EE", "et", Some("ee-et")),
    country("LV", "lv", Some("lv-lv")),
    country("LT", "lt", Some("lt-lt")),
    // Central and Eastern Europe
    country("PL", "pl", Some("pl-pl")),
    country("CZ", "cs", Some("cz-cs")),
    country("SK", "sk", Some("sk-sk")),
    country("HU", "hu", Some("hu-hu")),
    country("RO", "ro", Some("ro-ro")),
    country("BG", "bg", Some("bg-bg")),
    country("HR", "hr", Some("hr-hr")),
    country("SI", "sl", Some("sl-sl")),
    country("RS", "sr", None),
    country("RU", "ru", Some("ru-ru")),
    country("UA", "uk", Some("ua-uk")),
    country("GR", "el", Some("gr-el")),
    country("TR", "tr", Some("tr-tr")),
    // Middle East
    country("IL", "he", Some("il-he")),
    country("IR", "fa", None),
    country("SA", "ar", Some("xa-ar")),
    country("AE", "ar", Some("xa-ar")),
    country("QA", "ar", Some("xa-ar")),
    country("KW", "ar", Some("xa-ar")),
    country("BH", "ar", Some("xa-ar")),
    country("OM", "ar", Some("xa-ar")),
    country("JO", "ar", Some("xa-ar")),
    country("EG", "ar", Some("xa-ar")),
    // Asia
    country("JP", "ja", Some("jp-jp")),
    country("KR", "ko", Some("kr-kr")),
    country("CN", "zh", Some("cn-zh")),
    country("TW", "zh", Some("tw-tzh")),
    country("HK", "zh", Some("hk-tzh")),
    country("TH", "th", Some("th-th")),
    country("VN", "vi", Some("vn-vi")),
    country("ID", "id", Some("id-id")),
    country("MY", "ms", Some("my-ms")),
    country("BD", "bn", None),
];

/// The table's entry for `location`'s country, if it has one that the table knows.
fn lookup(location: Option<&UserLocation>) -> Option<&'static Country> {
    let code = location?.country.as_deref()?;
    COUNTRIES
        .iter()
        .find(|country| country.code.eq_ignore_ascii_case(code))
}

/// SearXNG's `language` for `location`: `<language>-<COUNTRY>`, e.g. `en-GB`.
pub(super) fn searxng_language(location: Option<&UserLocation>) -> Option<String> {
    lookup(location).map(|country| format!("{}-{}", country.language, country.code))
}

/// DuckDuckGo's `kl` region for `location`, e.g. `uk-en`.
pub(super) fn duckduckgo_region(location: Option<&UserLocation>) -> Option<&'static str> {
    lookup(location)?.duckduckgo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(country: &str) -> UserLocation {
        UserLocation {
            country: Some(country.into()),
            ..UserLocation::default()
        }
    }

    #[test]
    fn a_country_is_searxng_locale_of_its_principal_language() {
        for (country, locale) in [
            ("GB", "en-GB"),
            ("US", "en-US"),
            ("DE", "de-DE"),
            ("CH", "de-CH"),
            ("AT", "de-AT"),
            ("FR", "fr-FR"),
            ("BE", "nl-BE"),
            ("ES", "es-ES"),
            ("MX", "es-MX"),
            ("BR", "pt-BR"),
            ("JP", "ja-JP"),
            ("TW", "zh-TW"),
            ("KR", "ko-KR"),
            ("IN", "en-IN"),
            ("NO", "nb-NO"),
            ("SE", "sv-SE"),
            ("DK", "da-DK"),
            ("UA", "uk-UA"),
        ] {
            assert_eq!(
                searxng_language(Some(&at(country))).as_deref(),
                Some(locale),
                "{country}"
            );
        }
    }

    #[test]
    fn a_country_is_duckduckgo_region_as_duckduckgo_spells_it() {
        for (country, region) in [
            ("GB", "uk-en"),
            ("US", "us-en"),
            ("DE", "de-de"),
            ("FR", "fr-fr"),
            ("CH", "ch-de"),
            ("AT", "at-de"),
            ("JP", "jp-jp"),
            ("KR", "kr-kr"),
            ("NO", "no-no"),
            ("TW", "tw-tzh"),
            ("SI", "sl-sl"),
            ("CZ", "cz-cs"),
            ("UA", "ua-uk"),
            ("SA", "xa-ar"),
            ("UY", "xl-es"),
        ] {
            assert_eq!(
                duckduckgo_region(Some(&at(country))),
                Some(region),
                "{country}"
            );
        }
        assert_eq!(
            duckduckgo_region(Some(&at("IS"))),
            None,
            "DuckDuckGo has no region for Iceland"
        );
    }

    #[test]
    fn an_unknown_or_missing_country_narrows_nothing() {
        for location in [
            None,
            Some(UserLocation {
                city: Some("London".into()),
                timezone: Some("Europe/London".into()),
                ..UserLocation::default()
            }),
            Some(at("ZZ")),
        ] {
            assert_eq!(searxng_language(location.as_ref()), None, "{location:?}");
            assert_eq!(duckduckgo_region(location.as_ref()), None, "{location:?}");
        }
    }

    #[test]
    fn the_table_is_well_formed() {
        assert!(COUNTRIES.len() >= 60);
        for (i, country) in COUNTRIES.iter().enumerate() {
            let lower =
                |s: &str, len: usize| s.len() == len && s.chars().all(|c| c.is_ascii_lowercase());
            assert!(
                country.code.len() == 2 && country.code.chars().all(|c| c.is_ascii_uppercase()),
                "{}",
                country.code
            );
            assert!(lower(country.language, 2), "{}", country.code);
            if let Some(region) = country.duckduckgo {
                let (place, language) = region.split_once('-').unwrap();
                assert!(
                    lower(place, 2) && (lower(language, 2) || lower(language, 3)),
                    "{region}"
                );
            }
            assert!(
                COUNTRIES[..i].iter().all(|c| c.code != country.code),
                "{} twice",
                country.code
            );
        }
    }
}
