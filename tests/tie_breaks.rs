//! Every tie-break sentence of the regulations, quoted, with hands that exercise it.
//!
//! Each row: ruleset, article, the sentence (Portuguese, as in ../shared/seeds/),
//! two hands, and which one the sentence says wins. A reader can check each row
//! against the text; the test checks the engine against each row.
use std::cmp::Ordering;

use tablecam::rules::card::{parse_cards, Card};
use tablecam::rules::eval5::compare_stud;
use tablecam::rules::sangong::{compare as sangong_compare, SanGongWinner};
use tablecam::rules::{Ruleset, RulesetId};

struct Sentence {
    ruleset: RulesetId,
    article: &'static str,
    quote: &'static str,
    a: &'static str,
    b: &'static str,
    expected: Ordering,
}

use Ordering::{Equal as Tie, Greater as AWins, Less as BWins};
use RulesetId::*;

const SENTENCES: &[Sentence] = &[
    // fortune3cp-2025 Art. 7(1)
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(1)",
        quote: "ganha a mão com a carta de valor mais elevado",
        a: "10S 9S 8S",
        b: "9H 8H 7H",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(1)",
        quote: "Se as cartas de valor mais elevado forem iguais, verifica-se um empate",
        a: "10S 9S 8S",
        b: "10H 9H 8H",
        expected: Tie,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(2)",
        quote: "ganha a mão com a carta de valor mais elevado",
        a: "4S 4H 4D",
        b: "3S 3H 3D",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(3)",
        quote: "ganha a mão com a carta de valor mais elevado",
        a: "KS QH JD",
        b: "QS JH 10D",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(3)",
        quote: "Se as cartas de valor mais elevado forem iguais, verifica-se um empate",
        a: "KS QH JD",
        b: "KH QD JC",
        expected: Tie,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "6(2)",
        quote: "«A, K, Q», «K, Q, J» … e «3, 2, A»",
        a: "4S 3H 2D",
        b: "3S 2H AD",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(4)",
        quote: "ganha a mão com a segunda carta de valor mais elevado e assim sucessivamente",
        a: "KS 9S 4S",
        b: "KH 9H 3H",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(4)",
        quote: "Se todas as cartas tiverem o mesmo valor, verifica-se um empate",
        a: "KS 9S 4S",
        b: "KH 9H 4H",
        expected: Tie,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(5)",
        quote: "ganha a mão com o Par de valor mais elevado",
        a: "8S 8H 2D",
        b: "7S 7H AD",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(5)",
        quote: "ganha a mão com a carta de valor diferente mais elevado",
        a: "8S 8H 5D",
        b: "8D 8C 4D",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(5)",
        quote: "Se o valor de todas as cartas for igual, verifica-se um empate",
        a: "8S 8H 5D",
        b: "8D 8C 5C",
        expected: Tie,
    },
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(6)",
        quote: "ganha a mão com a segunda carta de valor mais elevada e assim sucessivamente",
        a: "AS 9H 3D",
        b: "AH 8D 7C",
        expected: AWins,
    },
    // Three odd cards with equal ranks: the text stops short; default push (docs/rules.md A-2).
    Sentence {
        ruleset: Fortune3cp2025,
        article: "7(1)(6)",
        quote: "até se apurar o vencedor (silent on equal ranks: push by default)",
        a: "AS 9H 3D",
        b: "AH 9D 3C",
        expected: Tie,
    },
    // fortune3cp-2008 Art. 4 and 8
    Sentence {
        ruleset: Fortune3cp2008,
        article: "4(2)",
        quote: "«Ás, Rei (K), Dama (Q)», «Rei (K), Dama (Q), Valete (J)»",
        a: "AS KS QS",
        b: "KH QH JH",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2008,
        article: "8(1)",
        quote: "3, 2, Á a combinação de valor mínimo",
        a: "4S 3S 2S",
        b: "3H 2H AH",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2008,
        article: "8(1)",
        quote: "Se as cartas de valor mais elevado forem iguais, verifica-se um empate",
        a: "6S 5S 4S",
        b: "6H 5H 4H",
        expected: Tie,
    },
    Sentence {
        ruleset: Fortune3cp2008,
        article: "8(3)",
        quote: "Se as cartas de valor mais elevado forem iguais, verifica-se um empate",
        a: "6S 5D 4S",
        b: "6H 5C 4H",
        expected: Tie,
    },
    Sentence {
        ruleset: Fortune3cp2008,
        article: "8(4)",
        quote: "ganha a «mão» com a segunda carta de valor mais elevado e assim sucessivamente",
        a: "JD 8D 2D",
        b: "JC 7C 6C",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2008,
        article: "8(5)",
        quote: "Se os pares forem de igual valor, ganha a «mão» com o «kicker» de valor mais elevado",
        a: "QS QD 9C",
        b: "QH QC 8D",
        expected: AWins,
    },
    Sentence {
        ruleset: Fortune3cp2008,
        article: "8(6)",
        quote: "ganha a «mão» com a segunda carta de valor mais elevada",
        a: "KS JH 2D",
        b: "KH 10D 9C",
        expected: AWins,
    },
    // qpoker-2004 Art. 4 and 8 (suit order S > H > C > D, Art. 4)
    Sentence {
        ruleset: Qpoker2004,
        article: "4(3)",
        quote: "A, 2, 3 (the lowest sequence)",
        a: "4D 3D 2C",
        b: "3S 2S AH",
        expected: AWins,
    },
    Sentence {
        ruleset: Qpoker2004,
        article: "8(1)",
        quote: "Se, as três cartas das duas «mãos» forem da mesma graduação, ganha aquela que tiver o maior naipe",
        a: "7H 6H 5H",
        b: "7C 6C 5C",
        expected: AWins,
    },
    Sentence {
        ruleset: Qpoker2004,
        article: "8(2)",
        quote: "a «mão» titular das cartas de maior graduação ganha",
        a: "5S 5H 5C",
        b: "4S 4H 4C",
        expected: AWins,
    },
    Sentence {
        ruleset: Qpoker2004,
        article: "8(3)",
        quote: "Sendo a graduação igual, ganha a que tiver o maior naipe",
        a: "9D 8S 7S",
        b: "9C 8D 7D",
        expected: BWins,
    },
    Sentence {
        ruleset: Qpoker2004,
        article: "8(4)",
        quote: "ganha aquele que tiver o naipe de maior graduação",
        a: "QD 8D 3D",
        b: "QS 8S 3S",
        expected: BWins,
    },
    Sentence {
        ruleset: Qpoker2004,
        article: "8(5)",
        quote: "ganha a «mão» que tiver o naipe de maior graduação na carta diferente",
        a: "10S 10H 6D",
        b: "10C 10D 6H",
        expected: BWins,
    },
    Sentence {
        ruleset: Qpoker2004,
        article: "8(6)",
        quote: "determinada pelo naipe da carta que tiver maior graduação",
        a: "KC 7S 2S",
        b: "KH 7D 2D",
        expected: BWins,
    },
    // stud-2004 Art. 8
    Sentence {
        ruleset: Stud2004,
        article: "8(1)",
        quote: "ganha aquele que tiver o naípe de maior graduação",
        a: "AH KH QH JH 10H",
        b: "AS KS QS JS 10S",
        expected: BWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(2)",
        quote: "Se, as cartas forem da mesma graduação, ganha aquele que tiver o maior naípe",
        a: "9C 8C 7C 6C 5C",
        b: "9D 8D 7D 6D 5D",
        expected: AWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(3)",
        quote: "A carta desigual não é contada para nenhum efeito",
        a: "7S 7H 7D 7C 2S",
        b: "6S 6H 6D 6C AS",
        expected: AWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(4)",
        quote: "a maior graduação das três cartas iguais",
        a: "8S 8H 8D 2C 2S",
        b: "7S 7H 7D AC AS",
        expected: AWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(5)",
        quote: "Se, o valor de todas as cartas for igual, ganha aquele que tiver o naípe de maior graduação",
        a: "KC 10C 7C 4C 2C",
        b: "KH 10H 7H 4H 2H",
        expected: BWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(6)",
        quote: "a «mão» vencedora é determinada pelo naípe da carta com maior graduação",
        a: "10S 9H 8D 7C 6D",
        b: "10D 9S 8S 7S 6S",
        expected: AWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(7)",
        quote: "As cartas desiguais não são contadas",
        a: "9S 9H 9D 2C 3S",
        b: "8S 8H 8D AC KS",
        expected: AWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(8)",
        quote: "pelo naipe do par de maior graduação",
        a: "JS JD 5C 5D 9H",
        b: "JH JC 5S 5H 9D",
        expected: AWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(9)",
        quote: "pelo naipe do par",
        a: "4C 4D AS KS QS",
        b: "4H 4S AD KD QD",
        expected: BWins,
    },
    Sentence {
        ruleset: Stud2004,
        article: "8(10)",
        quote: "pelo naipe da carta com maior graduação",
        a: "AS 10D 8C 5H 3H",
        b: "AH 10S 8S 5S 3S",
        expected: AWins,
    },
];

fn hand<const N: usize>(s: &str) -> [Card; N] {
    parse_cards(s).unwrap().try_into().unwrap_or_else(|_| panic!("{s:?} is not {N} cards"))
}

#[test]
fn every_quoted_tie_break_sentence_holds() {
    let mut failures = Vec::new();
    for s in SENTENCES {
        let rs = Ruleset::new(s.ruleset);
        let got = match s.ruleset {
            Stud2004 => compare_stud(hand(s.a), hand(s.b)),
            _ => {
                let r = rs.three_card_rules();
                r.eval(hand(s.a)).cmp(&r.eval(hand(s.b)))
            }
        };
        if got != s.expected {
            failures.push(format!(
                "{} Art. {} «{}»: {} vs {} gave {got:?}, expected {:?}",
                s.ruleset, s.article, s.quote, s.a, s.b, s.expected
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn sangong_art7_art8_and_annex_sentences() {
    let cases: [(&str, &str, &str, &str, SanGongWinner); 5] = [
        ("7(1)", "terá de ser superior à do banqueiro", "2S 3H 4D", "KS QH 9D", SanGongWinner::Player),
        ("7(2)", "ganha aquele que tiver a carta de valor mais elevado", "KS 4H 5D", "QS 4C 5C", SanGongWinner::Banker),
        (
            "annex",
            "K > Q > J > 10 > … > 2 > A; espadas > copas > paus > ouros",
            "KH 4H 5D",
            "KS 4C 5C",
            SanGongWinner::Player,
        ),
        (
            "8",
            "Ganha o banqueiro quando a sua pontuação como a do jogador forem zero sem figuras",
            "AD 9D 10D",
            "10S 4S 6S",
            SanGongWinner::Banker,
        ),
        (
            "6(1)",
            "As figuras e as cartas de valor facial dez (10) valem zero",
            "KS QH 10D",
            "JS QS KD",
            SanGongWinner::Player,
        ),
    ];
    for (article, quote, banker, player, expected) in cases {
        assert_eq!(sangong_compare(hand(banker), hand(player)), expected, "sangong-1996 Art. {article} «{quote}»");
    }
}
